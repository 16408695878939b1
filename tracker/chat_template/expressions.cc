// Expression evaluation: names, literals, attribute access and slicing, calls and their
// arguments, operators (with the reference's JavaScript semantics) and tests.

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {
namespace {

bool IsNumericLike(const Value& v) { return v.is_number() || v.is(ValueKind::kBoolean); }

Value NumberResult(double value, bool is_float) {
  return is_float ? Value::Float(value) : Value::Integer(value);
}

}  // namespace

std::string DescribeCallee(const Node& callee) {
  if (callee.kind == NodeKind::kIdentifier) return "'" + callee.text + "'";
  if (callee.kind == NodeKind::kMember && !callee.flag && callee.b->kind == NodeKind::kIdentifier) {
    return "method '" + callee.b->text + "'";
  }
  return "expression";
}

void Interpreter::EvaluateArguments(const std::vector<NodePtr>& args, const ScopePtr& scope,
                                    Array& positional, Object& keyword) {
  for (const NodePtr& arg : args) {
    if (failed()) return;
    if (arg->kind == NodeKind::kSpread) {
      const Value value = Evaluate(*arg->a, scope);
      if (failed()) return;
      if (!value.is_array_like()) {
        Fail(arg->pos, "cannot unpack " + std::string(value.TypeName()) + " with '*'");
        return;
      }
      for (const Value& item : value.array()) positional.push_back(item);
    } else if (arg->kind != NodeKind::kKeywordArgument && arg->kind != NodeKind::kKeywordSpread) {
      positional.push_back(Evaluate(*arg, scope));
    }
  }
  const auto add = [&](const std::string& key, Value value, SourcePos pos) {
    if (keyword.Find(key) != nullptr) {
      Fail(pos, "got multiple values for keyword argument '" + key + "'");
      return;
    }
    keyword.Set(key, std::move(value));
  };
  for (const NodePtr& arg : args) {
    if (failed()) return;
    if (arg->kind == NodeKind::kKeywordArgument) {
      Value value = Evaluate(*arg->a, scope);
      add(arg->text, std::move(value), arg->pos);
    } else if (arg->kind == NodeKind::kKeywordSpread) {
      const Value value = Evaluate(*arg->a, scope);
      if (failed()) return;
      if (!value.is_object_like()) {
        Fail(arg->pos,
             "the argument after ** must be a mapping, not " + std::string(value.TypeName()));
        return;
      }
      for (const auto& [key, item] : value.object().entries()) add(key, item, arg->pos);
    }
  }
}

Array Interpreter::EvaluateCallArguments(const std::vector<NodePtr>& args, const ScopePtr& scope) {
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

Value Interpreter::Evaluate(const Node& node, const ScopePtr& scope) {
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (++steps_ > options_.limits.max_steps) {
    return Fail(
        node.pos,
        "evaluation exceeds the limit of " + std::to_string(options_.limits.max_steps) + " steps",
        ErrorCode::kOverflow);
  }
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
      if (failed() || flow_ != Flow::kNormal) return Value();
      return ApplyFilter(*this, operand, *node.b, scope);
    }
    case NodeKind::kTest:
      return EvaluateTest(node, scope);
    case NodeKind::kTernary: {
      const Value condition = Evaluate(*node.a, scope);
      if (failed() || flow_ != Flow::kNormal) return Value();
      return Evaluate(Truthy(condition) ? *node.b : *node.c, scope);
    }
    case NodeKind::kSelect: {
      const Value condition = Evaluate(*node.b, scope);
      if (failed() || flow_ != Flow::kNormal || !Truthy(condition)) return Value();
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
        if (failed()) return Value();
        if (!key.is_string()) {
          return Fail(node.items[i]->pos,
                      "dictionary keys must be strings, got " + std::string(key.TypeName()));
        }
        object.Set(key.str(), Evaluate(*node.items[i + 1], scope));
      }
      return Value::MakeObject(std::move(object));
    }
    case NodeKind::kCallBlock:
      return EvaluateCallBlock(node, scope);
    default:
      return Fail(node.pos, "this construct cannot be used as a value");
  }
}

Value Interpreter::EvaluateCall(const Node& node, const ScopePtr& scope) {
  Array args = EvaluateCallArguments(node.items, scope);
  const Value callee = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (!callee.is(ValueKind::kFunction)) {
    return Fail(node.pos, "call to " + DescribeCallee(*node.a) + ": not a function (got " +
                              std::string(callee.TypeName()) + ")");
  }
  return callee.function().Call(*this, args, scope, node.pos);
}

Value Interpreter::EvaluateMember(const Node& node, const ScopePtr& scope) {
  const Value object = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  Value property;
  const Node& property_node = *node.b;
  if (node.flag) {
    if (property_node.kind == NodeKind::kSlice) return EvaluateSlice(object, property_node, scope);
    property = Evaluate(property_node, scope);
    if (failed()) return Value();
  } else if (property_node.kind == NodeKind::kIntegerLiteral) {
    property = Value::Integer(property_node.number);
  } else {
    property = Value::String(property_node.text);
  }
  if (object.has_entries()) {
    if (!property.is_string()) {
      return Fail(node.pos, "attribute access: a key must be a string, got " +
                                std::string(property.TypeName()));
    }
    if (const Value* found = object.object().Find(property.str())) return *found;
    return object.is_object_like() ? LookupBuiltin(object, property.str()) : Value();
  }
  if (object.is_array_like() || object.is_string()) {
    if (property.is(ValueKind::kInteger)) {
      if (object.is_string()) {
        std::string character;
        if (!text::Utf16At(object.str(), std::trunc(property.number()), character)) return Value();
        return Value::String(std::move(character));
      }
      const Array& items = object.array();
      double index = std::trunc(property.number());
      if (index < 0) index += static_cast<double>(items.size());
      if (index < 0 || index >= static_cast<double>(items.size())) return Value();
      return items[static_cast<size_t>(index)];
    }
    if (property.is_string()) return LookupBuiltin(object, property.str());
    return Fail(node.pos, "subscript: an index must be an integer or a string, got " +
                              std::string(property.TypeName()));
  }
  if (!property.is_string()) {
    return Fail(node.pos, "attribute access: a key must be a string, got " +
                              std::string(property.TypeName()));
  }
  return Value();
}

Value Interpreter::EvaluateSlice(const Value& object, const Node& slice, const ScopePtr& scope) {
  if (!object.is_array_like() && !object.is_string()) {
    return Fail(slice.pos, "slice: can only slice an array or a string, got " +
                               std::string(object.TypeName()));
  }
  double bounds[3] = {0, 0, 1};
  bool given[3] = {false, false, false};
  const Node* parts[3] = {slice.a.get(), slice.b.get(), slice.c.get()};
  for (int i = 0; i < 3; ++i) {
    if (!parts[i]) continue;
    const Value v = Evaluate(*parts[i], scope);
    if (failed()) return Value();
    if (v.is_undefined()) continue;
    if (!v.is(ValueKind::kInteger)) {
      return Fail(parts[i]->pos,
                  "slice: bounds must be integers, got " + std::string(v.TypeName()));
    }
    bounds[i] = v.number();
    given[i] = true;
  }
  std::vector<std::string_view> characters;
  if (object.is_string()) characters = text::CodePoints(object.str());
  const double length =
      static_cast<double>(object.is_string() ? characters.size() : object.array().size());
  const double step = given[2] ? bounds[2] : 1;
  double start = 0;
  double stop = 0;
  if (step >= 0) {
    start = given[0] ? bounds[0] : 0;
    start = start < 0 ? std::max(length + start, 0.0) : std::min(start, length);
    stop = given[1] ? bounds[1] : length;
    stop = stop < 0 ? std::max(length + stop, 0.0) : std::min(stop, length);
  } else {
    start = given[0] ? bounds[0] : length - 1;
    start = start < 0 ? std::max(length + start, -1.0) : std::min(start, length - 1);
    stop = given[1] ? bounds[1] : -1;
    stop = stop < -1 ? std::max(length + stop, -1.0) : std::min(stop, length - 1);
  }
  const double direction = step > 0 ? 1 : (step < 0 ? -1 : 0);
  std::string text_out;
  Array items_out;
  for (double i = start; direction * i < direction * stop; i += step) {
    const size_t k = static_cast<size_t>(i);
    if (object.is_string()) {
      text_out.append(characters[k]);
    } else {
      items_out.push_back(object.array()[k]);
    }
  }
  if (object.is_string()) return Value::String(std::move(text_out));
  return Value::MakeArray(std::move(items_out));
}

Value Interpreter::EvaluateUnary(const Node& node, const ScopePtr& scope) {
  const Value operand = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (node.text == "not") return Value::Boolean(!Truthy(operand));
  if (!IsNumericLike(operand)) {
    return Fail(node.pos,
                "unary '" + node.text + "': cannot apply to " + std::string(operand.TypeName()));
  }
  const double sign = node.text == "-" ? -1 : 1;
  return NumberResult(sign * operand.number(), operand.is(ValueKind::kFloat));
}

Value Interpreter::EvaluateTest(const Node& node, const ScopePtr& scope) {
  const Value operand = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  bool result = false;
  if (!RunTest(*this, node.text, operand, nullptr, node.pos, &result)) {
    return Fail(node.pos, "unknown test '" + node.text + "'", ErrorCode::kUnsupported);
  }
  if (failed()) return Value();
  return Value::Boolean(node.flag ? !result : result);
}

Value Interpreter::EvaluateBinary(const Node& node, const ScopePtr& scope) {
  const std::string& op = node.text;
  const Value left = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (op == "and") return Truthy(left) ? Evaluate(*node.b, scope) : left;
  if (op == "or") return Truthy(left) ? left : Evaluate(*node.b, scope);
  const Value right = Evaluate(*node.b, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (op == "==") return Value::Boolean(LooseEquals(left, right));
  if (op == "!=") return Value::Boolean(!LooseEquals(left, right));
  const auto fail_operator = [&] {
    return Fail(node.pos, "operator '" + op + "': cannot apply to " + std::string(left.TypeName()) +
                              " and " + std::string(right.TypeName()));
  };
  const auto raw = [&](const Value& v, std::string& out) {
    std::string error;
    if (ToRawString(v, out, &error)) return true;
    Fail(node.pos, "operator '" + op + "': " + error);
    return false;
  };
  const auto concat = [&](const Value& a, const Value& b) {
    std::string s;
    if ((!a.is_undefined() && !raw(a, s)) || (!b.is_undefined() && !raw(b, s))) return Value();
    if (!CheckSize(s.size(), node.pos)) return Value();
    return Value::String(std::move(s));
  };
  if (left.is_number() && right.is_number() && op != "~" && op != "**") {
    const double a = left.number();
    const double b = right.number();
    const bool is_float = left.is(ValueKind::kFloat) || right.is(ValueKind::kFloat);
    if (op == "+") return NumberResult(a + b, is_float);
    if (op == "-") return NumberResult(a - b, is_float);
    if (op == "*") return NumberResult(a * b, is_float);
    if (op == "/") return Value::Float(a / b);
    if (op == "//") return NumberResult(std::floor(a / b), is_float);
    if (op == "%") return NumberResult(std::fmod(a, b), is_float);
    if (op == "<") return Value::Boolean(a < b);
    if (op == ">") return Value::Boolean(a > b);
    if (op == ">=") return Value::Boolean(a >= b);
    if (op == "<=") return Value::Boolean(a <= b);
  } else if (left.is_undefined() || right.is_undefined()) {
    if (right.is_undefined() && (op == "in" || op == "not in"))
      return Value::Boolean(op == "not in");
    if (op == "~" && !left.is_null() && !right.is_null()) return concat(left, right);
    return Fail(node.pos, "operator '" + op + "': an operand is undefined");
  } else if (left.is_null() || right.is_null()) {
    return Fail(node.pos, "operator '" + op + "': an operand is none");
  } else if (op == "~") {
    return concat(left, right);
  } else if (op == "**" && IsNumericLike(left) && IsNumericLike(right)) {
    const double a = left.number();
    const double b = right.number();
    if (a == 0 && b < 0)
      return Fail(node.pos, "operator '**': 0.0 cannot be raised to a negative power");
    const double result = std::pow(a, b);
    if (!std::isfinite(result))
      return Fail(node.pos, "operator '**': the result is not a finite real number");
    return NumberResult(result, left.is(ValueKind::kFloat) || right.is(ValueKind::kFloat) || b < 0);
  } else if (left.is_array_like() && right.is_array_like()) {
    if (op == "+") {
      if (!CheckSize(left.array().size() + right.array().size(), node.pos)) return Value();
      Array items = left.array();
      items.insert(items.end(), right.array().begin(), right.array().end());
      return Value::MakeArray(std::move(items));
    }
  } else if (right.is_array_like()) {
    bool member = false;
    for (const Value& item : right.array()) member = member || StrictEquals(item, left);
    if (op == "in") return Value::Boolean(member);
    if (op == "not in") return Value::Boolean(!member);
  }
  if ((left.is_string() || right.is_string()) && op == "+") return concat(left, right);
  if (left.is_string() && right.is_string()) {
    const bool contains = right.str().find(left.str()) != std::string::npos;
    if (op == "in") return Value::Boolean(contains);
    if (op == "not in") return Value::Boolean(!contains);
  }
  if (left.is_string() && right.is_object_like()) {
    const bool has = right.object().Find(left.str()) != nullptr;
    if (op == "in") return Value::Boolean(has);
    if (op == "not in") return Value::Boolean(!has);
  }
  return fail_operator();
}

}  // namespace hubwatch::chat_template
