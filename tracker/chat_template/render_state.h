#pragma once

// The bookkeeping of one render: the sticky first error, the pending break / continue, the
// counters the limits bound (evaluation steps, loop iterations, macro call depth, the size of
// the output and of every value built on the way), and the scopes and namespaces the render
// created.
//
// Ownership: the Interpreter owns one RenderState per render; the ExpressionEvaluator borrows
// it. When the RenderState is destroyed it empties every scope and namespace it tracked, which
// frees the reference cycles macros can form. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/chat_template/scope.h"
#include "tracker/chat_template/template.h"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

class RenderState {
 public:
  // What a {% break %} or {% continue %} asks of the enclosing loop.
  enum class Flow { kNormal, kBreak, kContinue };

  // Tracks `globals` like the scopes the render makes.
  RenderState(const RenderOptions& options, const ScopePtr& globals);
  ~RenderState();
  RenderState(const RenderState&) = delete;
  RenderState& operator=(const RenderState&) = delete;

  const RenderOptions& options() const { return options_; }
  bool failed() const { return error_.has_value(); }
  // REQUIRES: failed()
  const Error& error() const { return *error_; }
  // Records the first error; returns undefined so callers can `return Fail(...)`.
  Value Fail(SourcePos pos, std::string message, ErrorCode code = ErrorCode::kInvalidInput);

  Flow flow() const { return flow_; }
  void set_flow(Flow flow) { flow_ = flow; }
  // True once an error or a pending break / continue stops evaluation.
  bool halted() const { return failed() || flow_ != Flow::kNormal; }

  // Counts one evaluation step against the limit; fails (kOverflow) past it.
  bool CountStep(SourcePos pos) { return ++steps_ <= options_.limits.max_steps || FailSteps(pos); }
  // Counts loop iterations against the limit.
  bool CountIterations(size_t n, SourcePos pos);
  // Fails (kOverflow) when a string or collection of `size` would exceed the limits.
  bool CheckSize(size_t size, SourcePos pos);
  // Appends to the output unless that would exceed the limits.
  bool Append(std::string& out, std::string_view piece, SourcePos pos);
  // Macro call depth.
  bool EnterCall(SourcePos pos);
  void LeaveCall() { --call_depth_; }

  // Every scope and namespace of a render is made through these, so that the render can free
  // them (and any reference cycles among them) when it ends.
  ScopePtr MakeScope(ScopePtr parent);
  void TrackNamespace(const Value& ns);  // REQUIRES: ns.is(ValueKind::kNamespace)

 private:
  // Record a kOverflow error; return false.
  bool FailOverflow(SourcePos pos, std::string message);
  bool FailSteps(SourcePos pos);

  // Remembers what a render created; drops expired entries as the list grows.
  template <class T>
  static void Track(std::vector<std::weak_ptr<T>>& list, const std::shared_ptr<T>& item) {
    if (list.size() >= 64 && list.size() == list.capacity()) {
      std::erase_if(list, [](const std::weak_ptr<T>& w) { return w.expired(); });
    }
    list.push_back(item);
  }

  RenderOptions options_;
  std::vector<std::weak_ptr<Scope>> scopes_;
  std::vector<std::weak_ptr<Object>> namespaces_;
  std::optional<Error> error_;
  Flow flow_ = Flow::kNormal;
  int call_depth_ = 0;
  int64_t steps_ = 0;
  int64_t iterations_ = 0;
};

}  // namespace hubwatch::chat_template
