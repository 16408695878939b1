#include "tracker/chat_template/expression_evaluator.h"

#include <string>
#include <utility>

#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/operators.h"

namespace hubwatch::chat_template {

std::string DescribeCallee(const Node& callee) {
  if (callee.kind == NodeKind::kIdentifier) return "'" + callee.text + "'";
  if (callee.kind == NodeKind::kMember && !callee.flag && callee.b->kind == NodeKind::kIdentifier) {
    return "method '" + callee.b->text + "'";
  }
  return "expression";
}

void ExpressionEvaluator::EvaluateArguments(const std::vector<NodePtr>& args, const ScopePtr& scope,
                                            Array& positional, Object& keyword) {
  for (const NodePtr& arg : args) {
    if (state_.failed()) return;
    if (arg->kind == NodeKind::kSpread) {
      const Value value = Evaluate(*arg->a, scope);
      if (state_.failed()) return;
      if (!value.is_array_like()) {
        state_.Fail(arg->pos, "cannot unpack " + std::string(value.TypeName()) + " with '*'");
        return;
      }
      for (const Value& item : value.array()) positional.push_back(item);
    } else if (arg->kind != NodeKind::kKeywordArgument && arg->kind != NodeKind::kKeywordSpread) {
      positional.push_back(Evaluate(*arg, scope));
    }
  }
  const auto add = [&](const std::string& key, Value value, SourcePos pos) {
    if (keyword.Find(key) != nullptr) {
      state_.Fail(pos, "got multiple values for keyword argument '" + key + "'");
      return;
    }
    keyword.Set(key, std::move(value));
  };
  for (const NodePtr& arg : args) {
    if (state_.failed()) return;
    if (arg->kind == NodeKind::kKeywordArgument) {
      Value value = Evaluate(*arg->a, scope);
      add(arg->text, std::move(value), arg->pos);
    } else if (arg->kind == NodeKind::kKeywordSpread) {
      const Value value = Evaluate(*arg->a, scope);
      if (state_.failed()) return;
      if (!value.is_object_like()) {
        state_.Fail(arg->pos, "the argument after ** must be a mapping, not " +
                                  std::string(value.TypeName()));
        return;
      }
      for (const auto& [key, item] : value.object().entries()) add(key, item, arg->pos);
    }
  }
}

Array ExpressionEvaluator::EvaluateCallArguments(const std::vector<NodePtr>& args,
                                                 const ScopePtr& scope) {
  for (const NodePtr& arg : args) {
    if (arg->kind == NodeKind::kKeywordArgument || arg->kind == NodeKind::kSpread ||
        arg->kind == NodeKind::kKeywordSpread) {
      Array positional;
      Object keyword;
      EvaluateArguments(args, scope, positional, keyword);
      if (keyword.size() > 0) positional.push_back(Value::MakeKeywordArguments(std::move(keyword)));
      return positional;
    }
  }
  Array positional;
  positional.reserve(args.size());
  for (const NodePtr& arg : args) positional.push_back(Evaluate(*arg, scope));
  return positional;
}

Value ExpressionEvaluator::Evaluate(const Node& node, const ScopePtr& scope) {
  if (state_.halted()) return Value();
  if (!state_.CountStep(node.pos)) return Value();
  switch (node.kind) {
    case NodeKind::kIdentifier:
      return scope->Lookup(node.text);
    case NodeKind::kIntegerLiteral:
      return Value::Integer(node.number);
    case NodeKind::kFloatLiteral:
      return Value::Float(node.number);
    case NodeKind::kStringLiteral:
      return node.literal;
    case NodeKind::kBinary:
      return EvaluateBinary(node, scope);
    case NodeKind::kMember:
      return EvaluateMember(node, scope);
    case NodeKind::kCall:
      return EvaluateCall(node, scope);
    case NodeKind::kFilter: {
      const Value operand = Evaluate(*node.a, scope);
      if (state_.halted()) return Value();
      return ApplyFilter(interpreter_, operand, *node.b, scope);
    }
    case NodeKind::kTest:
      return EvaluateTest(node, scope);
    case NodeKind::kTernary: {
      const Value condition = Evaluate(*node.a, scope);
      if (state_.halted()) return Value();
      return Evaluate(Truthy(condition) ? *node.b : *node.c, scope);
    }
    case NodeKind::kSelect: {
      const Value condition = Evaluate(*node.b, scope);
      if (state_.halted() || !Truthy(condition)) return Value();
      return Evaluate(*node.a, scope);
    }
    case NodeKind::kUnary:
      return EvaluateUnary(node, scope);
    case NodeKind::kArrayLiteral:
    case NodeKind::kTupleLiteral: {
      Array items;
      items.reserve(node.items.size());
      for (const NodePtr& item : node.items) items.push_back(Evaluate(*item, scope));
      return node.kind == NodeKind::kArrayLiteral ? Value::MakeArray(std::move(items))
                                                  : Value::MakeTuple(std::move(items));
    }
    case NodeKind::kObjectLiteral: {
      Object object;
      for (size_t i = 0; i + 1 < node.items.size(); i += 2) {
        const Value key = Evaluate(*node.items[i], scope);
        if (state_.failed()) return Value();
        if (!key.is_string()) {
          return state_.Fail(node.items[i]->pos,
                             "dictionary keys must be strings, got " + std::string(key.TypeName()));
        }
        object.Set(key.str(), Evaluate(*node.items[i + 1], scope));
      }
      return Value::MakeObject(std::move(object));
    }
    case NodeKind::kCallBlock:
      return interpreter_.EvaluateCallBlock(node, scope);
    default:
      return state_.Fail(node.pos, "this construct cannot be used as a value");
  }
}

Value ExpressionEvaluator::EvaluateCall(const Node& node, const ScopePtr& scope) {
  Array args = EvaluateCallArguments(node.items, scope);
  const Value callee = Evaluate(*node.a, scope);
  if (state_.halted()) return Value();
  if (!callee.is(ValueKind::kFunction)) {
    return state_.Fail(node.pos, "call to " + DescribeCallee(*node.a) + ": not a function (got " +
                                     std::string(callee.TypeName()) + ")");
  }
  return callee.function().Call(interpreter_, args, scope, node.pos);
}

Value ExpressionEvaluator::EvaluateMember(const Node& node, const ScopePtr& scope) {
  const Value object = Evaluate(*node.a, scope);
  if (state_.halted()) return Value();
  Value property;
  const Node& property_node = *node.b;
  if (node.flag) {
    if (property_node.kind == NodeKind::kSlice) return EvaluateSlice(object, property_node, scope);
    property = Evaluate(property_node, scope);
    if (state_.failed()) return Value();
  } else if (property_node.kind == NodeKind::kIntegerLiteral) {
    property = Value::Integer(property_node.number);
  } else {
    property = Value::String(property_node.text);
  }
  return MemberOperation(state_, node, object, property);
}

Value ExpressionEvaluator::EvaluateSlice(const Value& object, const Node& slice,
                                         const ScopePtr& scope) {
  if (!object.is_array_like() && !object.is_string()) {
    return state_.Fail(slice.pos, "slice: can only slice an array or a string, got " +
                                      std::string(object.TypeName()));
  }
  SliceBounds bounds;
  const Node* parts[3] = {slice.a.get(), slice.b.get(), slice.c.get()};
  for (int i = 0; i < 3; ++i) {
    if (!parts[i]) continue;
    const Value v = Evaluate(*parts[i], scope);
    if (state_.failed()) return Value();
    if (v.is_undefined()) continue;
    if (!v.is(ValueKind::kInteger)) {
      return state_.Fail(parts[i]->pos,
                         "slice: bounds must be integers, got " + std::string(v.TypeName()));
    }
    bounds.value[i] = v.number();
    bounds.given[i] = true;
  }
  return Slice(object, bounds);
}

Value ExpressionEvaluator::EvaluateUnary(const Node& node, const ScopePtr& scope) {
  const Value operand = Evaluate(*node.a, scope);
  if (state_.halted()) return Value();
  if (node.text == "not") return Value::Boolean(!Truthy(operand));
  return UnaryOperation(state_, node, operand);
}

Value ExpressionEvaluator::EvaluateTest(const Node& node, const ScopePtr& scope) {
  const Value operand = Evaluate(*node.a, scope);
  if (state_.halted()) return Value();
  bool result = false;
  if (!RunTest(interpreter_, node.text, operand, nullptr, node.pos, &result)) {
    return state_.Fail(node.pos, "unknown test '" + node.text + "'", ErrorCode::kUnsupported);
  }
  if (state_.failed()) return Value();
  return Value::Boolean(node.flag ? !result : result);
}

Value ExpressionEvaluator::EvaluateBinary(const Node& node, const ScopePtr& scope) {
  const std::string& op = node.text;
  const Value left = Evaluate(*node.a, scope);
  if (state_.halted()) return Value();
  if (op == "and") return Truthy(left) ? Evaluate(*node.b, scope) : left;
  if (op == "or") return Truthy(left) ? left : Evaluate(*node.b, scope);
  const Value right = Evaluate(*node.b, scope);
  if (state_.halted()) return Value();
  return BinaryOperation(state_, node, left, right);
}

}  // namespace hubwatch::chat_template
