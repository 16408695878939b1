#include "tracker/chat_template/operators.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {
namespace {

bool IsNumericLike(const Value& v) { return v.is_number() || v.is(ValueKind::kBoolean); }

Value NumberResult(double value, bool is_float) {
  return is_float ? Value::Float(value) : Value::Integer(value);
}

}  // namespace

Value UnaryOperation(RenderState& state, const Node& node, const Value& operand) {
  if (!IsNumericLike(operand)) {
    return state.Fail(
        node.pos, "unary '" + node.text + "': cannot apply to " + std::string(operand.TypeName()));
  }
  const double sign = node.text == "-" ? -1 : 1;
  return NumberResult(sign * operand.number(), operand.is(ValueKind::kFloat));
}

Value BinaryOperation(RenderState& state, const Node& node, const Value& left, const Value& right) {
  const std::string& op = node.text;
  if (op == "==") return Value::Boolean(LooseEquals(left, right));
  if (op == "!=") return Value::Boolean(!LooseEquals(left, right));
  const auto fail_operator = [&] {
    return state.Fail(node.pos, "operator '" + op + "': cannot apply to " +
                                    std::string(left.TypeName()) + " and " +
                                    std::string(right.TypeName()));
  };
  const auto raw = [&](const Value& v, std::string& out) {
    std::string error;
    if (ToRawString(v, out, &error)) return true;
    state.Fail(node.pos, "operator '" + op + "': " + error);
    return false;
  };
  const auto concat = [&](const Value& a, const Value& b) {
    std::string s;
    if ((!a.is_undefined() && !raw(a, s)) || (!b.is_undefined() && !raw(b, s))) return Value();
    if (!state.CheckSize(s.size(), node.pos)) return Value();
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
    return state.Fail(node.pos, "operator '" + op + "': an operand is undefined");
  } else if (left.is_null() || right.is_null()) {
    return state.Fail(node.pos, "operator '" + op + "': an operand is none");
  } else if (op == "~") {
    return concat(left, right);
  } else if (op == "**" && IsNumericLike(left) && IsNumericLike(right)) {
    const double a = left.number();
    const double b = right.number();
    if (a == 0 && b < 0)
      return state.Fail(node.pos, "operator '**': 0.0 cannot be raised to a negative power");
    const double result = std::pow(a, b);
    if (!std::isfinite(result))
      return state.Fail(node.pos, "operator '**': the result is not a finite real number");
    return NumberResult(result, left.is(ValueKind::kFloat) || right.is(ValueKind::kFloat) || b < 0);
  } else if (left.is_array_like() && right.is_array_like()) {
    if (op == "+") {
      if (!state.CheckSize(left.array().size() + right.array().size(), node.pos)) return Value();
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

Value MemberOperation(RenderState& state, const Node& node, const Value& object,
                      const Value& property) {
  if (object.has_entries()) {
    if (!property.is_string()) {
      return state.Fail(node.pos, "attribute access: a key must be a string, got " +
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
    return state.Fail(node.pos, "subscript: an index must be an integer or a string, got " +
                                    std::string(property.TypeName()));
  }
  if (!property.is_string()) {
    return state.Fail(node.pos, "attribute access: a key must be a string, got " +
                                    std::string(property.TypeName()));
  }
  return Value();
}

Value Slice(const Value& object, const SliceBounds& bounds) {
  std::vector<std::string_view> characters;
  if (object.is_string()) characters = text::CodePoints(object.str());
  const double length =
      static_cast<double>(object.is_string() ? characters.size() : object.array().size());
  const double step = bounds.given[2] ? bounds.value[2] : 1;
  double start = 0;
  double stop = 0;
  if (step >= 0) {
    start = bounds.given[0] ? bounds.value[0] : 0;
    start = start < 0 ? std::max(length + start, 0.0) : std::min(start, length);
    stop = bounds.given[1] ? bounds.value[1] : length;
    stop = stop < 0 ? std::max(length + stop, 0.0) : std::min(stop, length);
  } else {
    start = bounds.given[0] ? bounds.value[0] : length - 1;
    start = start < 0 ? std::max(length + start, -1.0) : std::min(start, length - 1);
    stop = bounds.given[1] ? bounds.value[1] : -1;
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

}  // namespace hubwatch::chat_template
