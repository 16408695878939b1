#include "tracker/chat_template/value.h"

#include <cmath>

#include "tracker/chat_template/js_number.h"
#include "tracker/chat_template/json_value.h"

namespace hubwatch::chat_template {

Object::Object(std::vector<std::pair<std::string, Value>> entries) {
  for (auto& [key, value] : entries) Set(key, std::move(value));
}

const Value* Object::Find(std::string_view key) const {
  for (const auto& entry : entries_) {
    if (entry.first == key) return &entry.second;
  }
  return nullptr;
}

void Object::Set(std::string_view key, Value value) {
  for (auto& entry : entries_) {
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::string(key), std::move(value));
}

bool Object::Erase(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

Value Value::Null() { return Value(ValueKind::kNull, 0, nullptr); }
Value Value::Boolean(bool b) { return Value(ValueKind::kBoolean, b ? 1 : 0, nullptr); }
Value Value::Integer(double v) { return Value(ValueKind::kInteger, v, nullptr); }
Value Value::Float(double v) { return Value(ValueKind::kFloat, v, nullptr); }
Value Value::String(std::string s) {
  return Value(ValueKind::kString, 0, std::make_shared<std::string>(std::move(s)));
}
Value Value::MakeArray(Array items) {
  return Value(ValueKind::kArray, 0, std::make_shared<Array>(std::move(items)));
}
Value Value::MakeTuple(Array items) {
  return Value(ValueKind::kTuple, 0, std::make_shared<Array>(std::move(items)));
}
Value Value::MakeObject(Object object) {
  return Value(ValueKind::kObject, 0, std::make_shared<Object>(std::move(object)));
}
Value Value::MakeKeywordArguments(Object object) {
  return Value(ValueKind::kKeywordArguments, 0, std::make_shared<Object>(std::move(object)));
}
Value Value::MakeNamespace(Object object) {
  return Value(ValueKind::kNamespace, 0, std::make_shared<Object>(std::move(object)));
}
Value Value::MakeFunction(std::shared_ptr<const Function> function) {
  return Value(ValueKind::kFunction, 0, std::const_pointer_cast<Function>(std::move(function)));
}

std::string_view Value::TypeName() const {
  switch (kind_) {
    case ValueKind::kUndefined:
      return "UndefinedValue";
    case ValueKind::kNull:
      return "NullValue";
    case ValueKind::kBoolean:
      return "BooleanValue";
    case ValueKind::kInteger:
      return "IntegerValue";
    case ValueKind::kFloat:
      return "FloatValue";
    case ValueKind::kString:
      return "StringValue";
    case ValueKind::kArray:
      return "ArrayValue";
    case ValueKind::kTuple:
      return "TupleValue";
    case ValueKind::kObject:
      return "ObjectValue";
    case ValueKind::kKeywordArguments:
      return "KeywordArgumentsValue";
    case ValueKind::kNamespace:
      return "NamespaceValue";
    case ValueKind::kFunction:
      return "FunctionValue";
  }
  return "UnknownValue";
}

bool Truthy(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNull:
      return false;
    case ValueKind::kBoolean:
      return v.boolean();
    case ValueKind::kInteger:
    case ValueKind::kFloat:
      return v.number() != 0 && !std::isnan(v.number());
    case ValueKind::kString:
      return !v.str().empty();
    case ValueKind::kArray:
    case ValueKind::kTuple:
      return !v.array().empty();
    case ValueKind::kObject:
    case ValueKind::kKeywordArguments:
      return v.object().size() > 0;
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
      return true;
  }
  return false;
}

bool RawTruthy(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNull:
      return false;
    case ValueKind::kBoolean:
      return v.boolean();
    case ValueKind::kInteger:
    case ValueKind::kFloat:
      return v.number() != 0 && !std::isnan(v.number());
    case ValueKind::kString:
      return !v.str().empty();
    default:
      return true;
  }
}

namespace {

// The JavaScript type of a value's underlying representation.
enum class JsType { kUndefined, kNull, kBoolean, kNumber, kString, kObject };

JsType TypeOf(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return JsType::kUndefined;
    case ValueKind::kNull:
      return JsType::kNull;
    case ValueKind::kBoolean:
      return JsType::kBoolean;
    case ValueKind::kInteger:
    case ValueKind::kFloat:
      return JsType::kNumber;
    case ValueKind::kString:
      return JsType::kString;
    default:
      return JsType::kObject;
  }
}

// ToPrimitive of a container, as a string; false for functions (their source text).
bool ContainerToPrimitive(const Value& v, std::string& out) {
  if (v.is(ValueKind::kFunction)) return false;
  return ToRawString(v, out, nullptr);
}

bool LooseEqualsNumber(double n, const Value& other) {
  switch (TypeOf(other)) {
    case JsType::kNumber:
    case JsType::kBoolean:
      return n == other.number();
    case JsType::kString:
      return n == js::StringToNumber(other.str());
    case JsType::kObject: {
      std::string primitive;
      return ContainerToPrimitive(other, primitive) && n == js::StringToNumber(primitive);
    }
    default:
      return false;
  }
}

}  // namespace

bool LooseEquals(const Value& a, const Value& b) {
  const JsType ta = TypeOf(a);
  const JsType tb = TypeOf(b);
  const auto nullish = [](JsType t) { return t == JsType::kUndefined || t == JsType::kNull; };
  if (ta == tb) {
    switch (ta) {
      case JsType::kUndefined:
      case JsType::kNull:
        return true;
      case JsType::kBoolean:
      case JsType::kNumber:
        return a.number() == b.number();
      case JsType::kString:
        return a.str() == b.str();
      case JsType::kObject:
        return a.identity() == b.identity();
    }
  }
  if (nullish(ta) || nullish(tb)) return nullish(ta) && nullish(tb);
  if (ta == JsType::kNumber || ta == JsType::kBoolean) return LooseEqualsNumber(a.number(), b);
  if (tb == JsType::kNumber || tb == JsType::kBoolean) return LooseEqualsNumber(b.number(), a);
  // One string and one container.
  const Value& container = ta == JsType::kObject ? a : b;
  const Value& string = ta == JsType::kObject ? b : a;
  std::string primitive;
  return ContainerToPrimitive(container, primitive) && primitive == string.str();
}

bool StrictEquals(const Value& a, const Value& b) {
  const JsType ta = TypeOf(a);
  if (ta != TypeOf(b)) return false;
  switch (ta) {
    case JsType::kUndefined:
    case JsType::kNull:
      return true;
    case JsType::kBoolean:
    case JsType::kNumber:
      return a.number() == b.number();
    case JsType::kString:
      return a.str() == b.str();
    case JsType::kObject:
      return a.identity() == b.identity();
  }
  return false;
}

bool ToDisplayString(const Value& v, std::string& out, std::string* error) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      out += "undefined";
      return true;
    case ValueKind::kNull:
      out += "null";
      return true;
    case ValueKind::kBoolean:
      out += v.boolean() ? "true" : "false";
      return true;
    case ValueKind::kInteger:
      out += js::NumberToString(v.number());
      return true;
    case ValueKind::kFloat:
      out += js::FloatToString(v.number());
      return true;
    case ValueKind::kString:
      out += v.str();
      return true;
    case ValueKind::kFunction:
      if (error) *error = "cannot print a function";
      return false;
    default: {
      JsonFormat format;
      format.undefined_as_null = false;
      return ToJson(v, format, out, error);
    }
  }
}

bool ToRawString(const Value& v, std::string& out, std::string* error) {
  switch (v.kind()) {
    case ValueKind::kInteger:
    case ValueKind::kFloat:
      out += js::NumberToString(v.number());
      return true;
    case ValueKind::kArray:
    case ValueKind::kTuple: {
      bool first = true;
      for (const Value& item : v.array()) {
        if (!first) out.push_back(',');
        first = false;
        if (!ToDisplayString(item, out, error)) return false;
      }
      return true;
    }
    case ValueKind::kObject:
    case ValueKind::kKeywordArguments:
    case ValueKind::kNamespace:
      out += "[object Map]";
      return true;
    default:
      return ToDisplayString(v, out, error);
  }
}

}  // namespace hubwatch::chat_template
