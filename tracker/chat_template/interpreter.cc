#include "tracker/chat_template/interpreter.h"

#include <optional>
#include <utility>

#include "tracker/chat_template/for_loop.h"

namespace hubwatch::chat_template {

Interpreter::Interpreter(const RenderOptions& options, ScopePtr globals)
    : globals_(std::move(globals)), state_(options, globals_), evaluator_(*this, state_) {}

Result<std::string> Interpreter::Render(const std::vector<NodePtr>& program) {
  std::string out;
  RenderBlock(program, globals_, out);
  if (!state_.failed() && state_.flow() != Flow::kNormal) {
    state_.Fail({1, 1}, state_.flow() == Flow::kBreak ? "break outside a for loop"
                                                      : "continue outside a for loop");
  }
  if (state_.failed()) return state_.error();
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
    if (state_.halted()) return;
    RenderStatement(*statement, scope, out);
  }
}

void Interpreter::RenderStatement(const Node& node, const ScopePtr& scope, std::string& out) {
  if (!state_.CountStep(node.pos)) return;
  Value value;
  switch (node.kind) {
    case NodeKind::kText:
    case NodeKind::kStringLiteral:
      state_.Append(out, node.text, node.pos);
      return;
    case NodeKind::kComment:
      return;
    case NodeKind::kIf: {
      const Value test = evaluator_.Evaluate(*node.a, scope);
      if (state_.halted()) return;
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
      scope->Set(node.text, Value::MakeFunction(MakeMacro(node, scope)));
      return;
    case NodeKind::kBreak:
      state_.set_flow(Flow::kBreak);
      return;
    case NodeKind::kContinue:
      state_.set_flow(Flow::kContinue);
      return;
    case NodeKind::kCallBlock:
      value = EvaluateCallBlock(node, scope);
      break;
    case NodeKind::kFilterBlock: {
      std::string rendered = RenderToString(node.body, scope);
      if (state_.halted()) return;
      value = ApplyFilter(*this, Value::String(std::move(rendered)), *node.a, scope);
      break;
    }
    default:
      value = evaluator_.Evaluate(node, scope);
      break;
  }
  if (state_.halted() || value.is_null() || value.is_undefined()) return;
  std::string error;
  const size_t before = out.size();
  if (!ToDisplayString(value, out, &error)) {
    out.resize(before);
    state_.Fail(node.pos, "cannot print the value: " + error);
    return;
  }
  state_.CheckSize(out.size(), node.pos);
}

void Interpreter::RenderFor(const Node& node, const ScopePtr& scope, std::string& out) {
  auto loop_scope = state_.MakeScope(scope);
  const std::optional<Array> items = SelectLoopItems(node, loop_scope, evaluator_, state_);
  if (!items) return;
  bool no_iteration = true;
  std::string iteration;
  for (size_t i = 0; i < items->size(); ++i) {
    if (!state_.CountIterations(1, node.pos)) return;
    loop_scope->Set("loop", LoopVariable(*items, i));
    BindLoopTarget(*node.a, (*items)[i], *loop_scope, state_);
    // The reference renders each iteration on its own and drops it on break / continue.
    iteration.clear();
    RenderBlock(node.body, loop_scope, iteration);
    if (state_.failed()) return;
    if (state_.flow() == Flow::kContinue) {
      state_.set_flow(Flow::kNormal);
      continue;
    }
    if (state_.flow() == Flow::kBreak) {
      state_.set_flow(Flow::kNormal);
      break;
    }
    if (!state_.Append(out, iteration, node.pos)) return;
    no_iteration = false;
  }
  if (no_iteration) RenderBlock(node.alternate, loop_scope, out);
}

void Interpreter::ExecuteSet(const Node& node, const ScopePtr& scope) {
  Value value;
  if (node.b) {
    value = evaluator_.Evaluate(*node.b, scope);
  } else {
    value = Value::String(RenderToString(node.body, scope));
  }
  if (state_.halted()) return;
  const Node& target = *node.a;
  switch (target.kind) {
    case NodeKind::kIdentifier:
      scope->Set(target.text, std::move(value));
      return;
    case NodeKind::kTupleLiteral: {
      if (!value.is_array_like()) {
        state_.Fail(target.pos, "set: cannot unpack " + std::string(value.TypeName()));
        return;
      }
      const Array& items = value.array();
      if (items.size() != target.items.size()) {
        state_.Fail(target.pos, std::string("set: too ") +
                                    (target.items.size() > items.size() ? "few" : "many") +
                                    " items to unpack");
        return;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        if (target.items[i]->kind != NodeKind::kIdentifier) {
          state_.Fail(target.items[i]->pos, "set: can only unpack into names");
          return;
        }
        scope->Set(target.items[i]->text, items[i]);
      }
      return;
    }
    case NodeKind::kMember: {
      const Value object = evaluator_.Evaluate(*target.a, scope);
      if (state_.failed()) return;
      if (!object.is(ValueKind::kNamespace)) {
        state_.Fail(target.pos, "set: cannot assign an attribute of " +
                                    std::string(object.TypeName()) + " (only of a namespace)");
        return;
      }
      if (target.b->kind != NodeKind::kIdentifier) {
        state_.Fail(target.pos, "set: a namespace attribute must be a name");
        return;
      }
      object.namespace_object().Set(target.b->text, std::move(value));
      return;
    }
    default:
      state_.Fail(target.pos, "set: invalid assignment target");
      return;
  }
}

Value Interpreter::EvaluateCallBlock(const Node& node, const ScopePtr& scope) {
  const Node& call = *node.a;
  auto caller = MakeCaller(node, scope);
  Array args;
  Object keywords;
  evaluator_.EvaluateArguments(call.items, scope, args, keywords);
  args.push_back(Value::MakeKeywordArguments(std::move(keywords)));
  const Value callee = evaluator_.Evaluate(*call.a, scope);
  if (state_.halted()) return Value();
  if (!callee.is(ValueKind::kFunction)) {
    return state_.Fail(call.pos, "call block: " + DescribeCallee(*call.a) +
                                     " is not a macro (got " + std::string(callee.TypeName()) +
                                     ")");
  }
  auto call_scope = state_.MakeScope(scope);
  call_scope->is_call_block = true;
  call_scope->Set("caller", Value::MakeFunction(std::move(caller)));
  return callee.function().Call(*this, args, call_scope, call.pos);
}

}  // namespace hubwatch::chat_template
