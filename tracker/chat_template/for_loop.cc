#include "tracker/chat_template/for_loop.h"

#include <string>
#include <utility>

namespace hubwatch::chat_template {

std::optional<Array> SelectLoopItems(const Node& node, const ScopePtr& loop_scope,
                                     ExpressionEvaluator& evaluator, RenderState& state) {
  const Node* test = nullptr;
  Value iterable;
  if (node.b->kind == NodeKind::kSelect) {
    iterable = evaluator.Evaluate(*node.b->a, loop_scope);
    test = node.b->b.get();
  } else {
    iterable = evaluator.Evaluate(*node.b, loop_scope);
  }
  if (state.halted()) return std::nullopt;
  if (!iterable.is_array_like() && !iterable.is_object_like()) {
    state.Fail(node.b->pos, "for loop: expected an array or an object to iterate, got " +
                                std::string(iterable.TypeName()));
    return std::nullopt;
  }
  if (iterable.is_object_like()) {
    Array keys;
    for (const auto& entry : iterable.object().entries())
      keys.push_back(Value::String(entry.first));
    iterable = Value::MakeArray(std::move(keys));
  }
  const Node& target = *node.a;
  const Array& candidates = iterable.array();
  if (target.kind == NodeKind::kIdentifier && test == nullptr) return candidates;
  Array items;
  for (const Value& candidate : candidates) {
    if (target.kind == NodeKind::kTupleLiteral) {
      if (!candidate.is(ValueKind::kArray)) {
        state.Fail(target.pos, "for loop: cannot unpack " + std::string(candidate.TypeName()));
        return std::nullopt;
      }
      const size_t expected = target.items.size();
      const size_t actual = candidate.array().size();
      if (expected != actual) {
        state.Fail(target.pos, std::string("for loop: too ") +
                                   (expected > actual ? "few" : "many") + " items to unpack");
        return std::nullopt;
      }
    }
    if (test != nullptr) {
      if (!state.CountIterations(1, node.pos)) return std::nullopt;
      auto test_scope = state.MakeScope(loop_scope);
      BindLoopTarget(target, candidate, *test_scope, state);
      const Value keep = evaluator.Evaluate(*test, test_scope);
      if (state.halted()) return std::nullopt;
      if (!Truthy(keep)) continue;
    }
    items.push_back(candidate);
  }
  return items;
}

void BindLoopTarget(const Node& target, const Value& item, Scope& into, RenderState& state) {
  if (target.kind == NodeKind::kIdentifier) {
    into.Set(target.text, item);
    return;
  }
  for (size_t j = 0; j < target.items.size(); ++j) {
    if (target.items[j]->kind != NodeKind::kIdentifier) {
      state.Fail(target.items[j]->pos, "for loop: can only unpack into names");
      return;
    }
    into.Set(target.items[j]->text, item.array()[j]);
  }
}

Value LoopVariable(const Array& items, size_t i) {
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
  return Value::MakeObject(std::move(loop));
}

}  // namespace hubwatch::chat_template
