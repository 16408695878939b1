#include "tracker/chat_template/interpreter.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {

const Value* Scope::FindOwn(std::string_view name) const {
  for (const auto& [key, value] : variables) {
    if (key == name) return &value;
  }
  return nullptr;
}

Value Scope::Lookup(std::string_view name) const {
  for (const Scope* scope = this; scope != nullptr; scope = scope->parent.get()) {
    if (const Value* value = scope->FindOwn(name)) return *value;
  }
  return Value();
}

void Scope::Set(std::string_view name, Value value) {
  for (auto& [key, existing] : variables) {
    if (key == name) {
      existing = std::move(value);
      return;
    }
  }
  variables.emplace_back(std::string(name), std::move(value));
}

namespace {

std::string Located(SourcePos pos, std::string_view message) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": " +
         std::string(message);
}

}  // namespace

Interpreter::Interpreter(const RenderOptions& options, ScopePtr globals)
    : options_(options), globals_(std::move(globals)) {
  scopes_.push_back(globals_);
}

Interpreter::~Interpreter() {
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

ScopePtr Interpreter::MakeScope(ScopePtr parent) {
  auto scope = std::make_shared<Scope>(std::move(parent));
  Track(scopes_, scope);
  return scope;
}

void Interpreter::TrackNamespace(const Value& ns) { Track(namespaces_, ns.shared_namespace()); }

Value Interpreter::Fail(SourcePos pos, std::string message, ErrorCode code) {
  if (!error_) error_ = Error{code, Located(pos, message)};
  return Value();
}

bool Interpreter::CheckSize(size_t size, SourcePos pos) {
  if (size <= options_.limits.max_output_bytes) return true;
  Fail(pos,
       "output or value exceeds the limit of " + std::to_string(options_.limits.max_output_bytes) +
           " bytes",
       ErrorCode::kOverflow);
  return false;
}

bool Interpreter::CountIterations(size_t n, SourcePos pos) {
  iterations_ += static_cast<int64_t>(n);
  if (iterations_ <= options_.limits.max_loop_iterations) return true;
  Fail(pos,
       "loops exceed the limit of " + std::to_string(options_.limits.max_loop_iterations) +
           " iterations",
       ErrorCode::kOverflow);
  return false;
}

bool Interpreter::EnterCall(SourcePos pos) {
  if (++call_depth_ <= options_.limits.max_call_depth) return true;
  --call_depth_;
  Fail(pos,
       "macro calls nest deeper than " + std::to_string(options_.limits.max_call_depth) + " levels",
       ErrorCode::kOverflow);
  return false;
}

bool Interpreter::Append(std::string& out, std::string_view piece, SourcePos pos) {
  if (!CheckSize(out.size() + piece.size(), pos)) return false;
  out.append(piece);
  return true;
}

Result<std::string> Interpreter::Render(const std::vector<NodePtr>& program) {
  std::string out;
  RenderBlock(program, globals_, out);
  if (!failed() && flow_ != Flow::kNormal) {
    Fail({1, 1},
         flow_ == Flow::kBreak ? "break outside a for loop" : "continue outside a for loop");
  }
  if (failed()) return *error_;
  return out;
}

std::string Interpreter::RenderToString(const std::vector<NodePtr>& body, const ScopePtr& scope) {
  std::string out;
  RenderBlock(body, scope, out);
  return out;
}

void Interpreter::RenderBlock(const std::vector<NodePtr>& body, const ScopePtr& scope,
                              std::string& out) {
  for (const NodePtr& statement : body) {
    if (failed() || flow_ != Flow::kNormal) return;
    RenderStatement(*statement, scope, out);
  }
}

void Interpreter::RenderStatement(const Node& node, const ScopePtr& scope, std::string& out) {
  if (++steps_ > options_.limits.max_steps) {
    Fail(node.pos,
         "evaluation exceeds the limit of " + std::to_string(options_.limits.max_steps) + " steps",
         ErrorCode::kOverflow);
    return;
  }
  Value value;
  switch (node.kind) {
    case NodeKind::kText:
    case NodeKind::kStringLiteral:
      Append(out, node.text, node.pos);
      return;
    case NodeKind::kComment:
      return;
    case NodeKind::kIf: {
      const Value test = Evaluate(*node.a, scope);
      if (failed() || flow_ != Flow::kNormal) return;
      RenderBlock(Truthy(test) ? node.body : node.alternate, scope, out);
      return;
    }
    case NodeKind::kFor:
      RenderFor(node, scope, out);
      return;
    case NodeKind::kSet:
      ExecuteSet(node, scope);
      return;
    case NodeKind::kMacro:
      DefineMacro(node, scope);
      return;
    case NodeKind::kBreak:
      flow_ = Flow::kBreak;
      return;
    case NodeKind::kContinue:
      flow_ = Flow::kContinue;
      return;
    case NodeKind::kCallBlock:
      value = EvaluateCallBlock(node, scope);
      break;
    case NodeKind::kFilterBlock: {
      std::string rendered = RenderToString(node.body, scope);
      if (failed() || flow_ != Flow::kNormal) return;
      value = ApplyFilter(*this, Value::String(std::move(rendered)), *node.a, scope);
      break;
    }
    default:
      value = Evaluate(node, scope);
      break;
  }
  if (failed() || flow_ != Flow::kNormal || value.is_null() || value.is_undefined()) return;
  std::string error;
  const size_t before = out.size();
  if (!ToDisplayString(value, out, &error)) {
    out.resize(before);
    Fail(node.pos, "cannot print the value: " + error);
    return;
  }
  CheckSize(out.size(), node.pos);
}

void Interpreter::RenderFor(const Node& node, const ScopePtr& scope, std::string& out) {
  auto loop_scope = MakeScope(scope);
  const Node* test = nullptr;
  Value iterable;
  if (node.b->kind == NodeKind::kSelect) {
    iterable = Evaluate(*node.b->a, loop_scope);
    test = node.b->b.get();
  } else {
    iterable = Evaluate(*node.b, loop_scope);
  }
  if (failed() || flow_ != Flow::kNormal) return;
  if (!iterable.is_array_like() && !iterable.is_object_like()) {
    Fail(node.b->pos, "for loop: expected an array or an object to iterate, got " +
                          std::string(iterable.TypeName()));
    return;
  }
  if (iterable.is_object_like()) {
    Array keys;
    for (const auto& entry : iterable.object().entries())
      keys.push_back(Value::String(entry.first));
    iterable = Value::MakeArray(std::move(keys));
  }
  const Node& target = *node.a;
  const auto bind = [&](const Value& item, Scope& into) {
    if (target.kind == NodeKind::kIdentifier) {
      into.Set(target.text, item);
      return;
    }
    for (size_t j = 0; j < target.items.size(); ++j) {
      if (target.items[j]->kind != NodeKind::kIdentifier) {
        Fail(target.items[j]->pos, "for loop: can only unpack into names");
        return;
      }
      into.Set(target.items[j]->text, item.array()[j]);
    }
  };
  const Array& candidates = iterable.array();
  Array items;
  if (target.kind == NodeKind::kIdentifier && test == nullptr) {
    items = candidates;
  } else {
    for (const Value& candidate : candidates) {
      if (target.kind == NodeKind::kTupleLiteral) {
        if (!candidate.is(ValueKind::kArray)) {
          Fail(target.pos, "for loop: cannot unpack " + std::string(candidate.TypeName()));
          return;
        }
        const size_t expected = target.items.size();
        const size_t actual = candidate.array().size();
        if (expected != actual) {
          Fail(target.pos, std::string("for loop: too ") + (expected > actual ? "few" : "many") +
                               " items to unpack");
          return;
        }
      }
      if (test != nullptr) {
        if (!CountIterations(1, node.pos)) return;
        auto test_scope = MakeScope(loop_scope);
        bind(candidate, *test_scope);
        const Value keep = Evaluate(*test, test_scope);
        if (failed() || flow_ != Flow::kNormal) return;
        if (!Truthy(keep)) continue;
      }
      items.push_back(candidate);
    }
  }
  bool no_iteration = true;
  std::string iteration;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!CountIterations(1, node.pos)) return;
    const double length = static_cast<double>(items.size());
    const double index = static_cast<double>(i);
    Object loop;
    loop.Set("index", Value::Integer(index + 1));
    loop.Set("index0", Value::Integer(index));
    loop.Set("revindex", Value::Integer(length - index));
    loop.Set("revindex0", Value::Integer(length - index - 1));
    loop.Set("first", Value::Boolean(i == 0));
    loop.Set("last", Value::Boolean(i + 1 == items.size()));
    loop.Set("length", Value::Integer(length));
    loop.Set("previtem", i > 0 ? items[i - 1] : Value());
    loop.Set("nextitem", i + 1 < items.size() ? items[i + 1] : Value());
    loop_scope->Set("loop", Value::MakeObject(std::move(loop)));
    bind(items[i], *loop_scope);
    // The reference renders each iteration on its own and drops it on break / continue.
    iteration.clear();
    RenderBlock(node.body, loop_scope, iteration);
    if (failed()) return;
    if (flow_ == Flow::kContinue) {
      flow_ = Flow::kNormal;
      continue;
    }
    if (flow_ == Flow::kBreak) {
      flow_ = Flow::kNormal;
      break;
    }
    if (!Append(out, iteration, node.pos)) return;
    no_iteration = false;
  }
  if (no_iteration) RenderBlock(node.alternate, loop_scope, out);
}

void Interpreter::ExecuteSet(const Node& node, const ScopePtr& scope) {
  Value value;
  if (node.b) {
    value = Evaluate(*node.b, scope);
  } else {
    value = Value::String(RenderToString(node.body, scope));
  }
  if (failed() || flow_ != Flow::kNormal) return;
  const Node& target = *node.a;
  switch (target.kind) {
    case NodeKind::kIdentifier:
      scope->Set(target.text, std::move(value));
      return;
    case NodeKind::kTupleLiteral: {
      if (!value.is_array_like()) {
        Fail(target.pos, "set: cannot unpack " + std::string(value.TypeName()));
        return;
      }
      const Array& items = value.array();
      if (items.size() != target.items.size()) {
        Fail(target.pos, std::string("set: too ") +
                             (target.items.size() > items.size() ? "few" : "many") +
                             " items to unpack");
        return;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        if (target.items[i]->kind != NodeKind::kIdentifier) {
          Fail(target.items[i]->pos, "set: can only unpack into names");
          return;
        }
        scope->Set(target.items[i]->text, items[i]);
      }
      return;
    }
    case NodeKind::kMember: {
      const Value object = Evaluate(*target.a, scope);
      if (failed()) return;
      if (!object.is(ValueKind::kNamespace)) {
        Fail(target.pos, "set: cannot assign an attribute of " + std::string(object.TypeName()) +
                             " (only of a namespace)");
        return;
      }
      if (target.b->kind != NodeKind::kIdentifier) {
        Fail(target.pos, "set: a namespace attribute must be a name");
        return;
      }
      object.namespace_object().Set(target.b->text, std::move(value));
      return;
    }
    default:
      Fail(target.pos, "set: invalid assignment target");
      return;
  }
}

void Interpreter::DefineMacro(const Node& node, const ScopePtr& scope) {
  scope->Set(node.text, Value::MakeFunction(MakeMacro(node, scope)));
}

Value Interpreter::EvaluateCallBlock(const Node& node, const ScopePtr& scope) {
  const Node& call = *node.a;
  auto caller = MakeCaller(node, scope);
  Array args;
  Object keywords;
  EvaluateArguments(call.items, scope, args, keywords);
  args.push_back(Value::MakeKeywordArguments(std::move(keywords)));
  const Value callee = Evaluate(*call.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (!callee.is(ValueKind::kFunction)) {
    return Fail(call.pos, "call block: " + DescribeCallee(*call.a) + " is not a macro (got " +
                              std::string(callee.TypeName()) + ")");
  }
  auto call_scope = MakeScope(scope);
  call_scope->is_call_block = true;
  call_scope->Set("caller", Value::MakeFunction(std::move(caller)));
  return callee.function().Call(*this, args, call_scope, call.pos);
}

}  // namespace hubwatch::chat_template
