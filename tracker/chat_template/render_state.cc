#include "tracker/chat_template/render_state.h"

#include <utility>

namespace hubwatch::chat_template {
namespace {

std::string Located(SourcePos pos, std::string_view message) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": " +
         std::string(message);
}

}  // namespace

RenderState::RenderState(const RenderOptions& options, const ScopePtr& globals)
    : options_(options) {
  scopes_.push_back(globals);
}

RenderState::~RenderState() {
  // Macros keep the scope they were defined in, and scopes and namespaces may hold macros and
  // namespaces, so a render can leave reference cycles; values never outlive the render, so
  // emptying every scope and namespace it created frees them all.
  for (const std::weak_ptr<Scope>& weak : scopes_) {
    if (ScopePtr scope = weak.lock()) {
      scope->variables.clear();
      scope->parent.reset();
    }
  }
  for (const std::weak_ptr<Object>& weak : namespaces_) {
    if (std::shared_ptr<Object> object = weak.lock()) object->Clear();
  }
}

ScopePtr RenderState::MakeScope(ScopePtr parent) {
  auto scope = std::make_shared<Scope>(std::move(parent));
  Track(scopes_, scope);
  return scope;
}

void RenderState::TrackNamespace(const Value& ns) { Track(namespaces_, ns.shared_namespace()); }

Value RenderState::Fail(SourcePos pos, std::string message, ErrorCode code) {
  if (!error_) error_ = Error{code, Located(pos, message)};
  return Value();
}

bool RenderState::FailOverflow(SourcePos pos, std::string message) {
  Fail(pos, std::move(message), ErrorCode::kOverflow);
  return false;
}

bool RenderState::FailSteps(SourcePos pos) {
  return FailOverflow(pos, "evaluation exceeds the limit of " +
                               std::to_string(options_.limits.max_steps) + " steps");
}

bool RenderState::CheckSize(size_t size, SourcePos pos) {
  return size <= options_.limits.max_output_bytes ||
         FailOverflow(pos, "output or value exceeds the limit of " +
                               std::to_string(options_.limits.max_output_bytes) + " bytes");
}

bool RenderState::CountIterations(size_t n, SourcePos pos) {
  iterations_ += static_cast<int64_t>(n);
  return iterations_ <= options_.limits.max_loop_iterations ||
         FailOverflow(pos, "loops exceed the limit of " +
                               std::to_string(options_.limits.max_loop_iterations) + " iterations");
}

bool RenderState::Append(std::string& out, std::string_view piece, SourcePos pos) {
  if (!CheckSize(out.size() + piece.size(), pos)) return false;
  out.append(piece);
  return true;
}

bool RenderState::EnterCall(SourcePos pos) {
  if (++call_depth_ <= options_.limits.max_call_depth) return true;
  --call_depth_;
  return FailOverflow(pos, "macro calls nest deeper than " +
                               std::to_string(options_.limits.max_call_depth) + " levels");
}

}  // namespace hubwatch::chat_template
