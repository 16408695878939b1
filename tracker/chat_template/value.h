#pragma once

// The runtime value model of the template engine, mirroring @huggingface/jinja's runtime
// values (IntegerValue, FloatValue, StringValue, ArrayValue, TupleValue, ObjectValue,
// KeywordArgumentsValue, NamespaceValue, FunctionValue, NullValue, UndefinedValue) and the
// JavaScript semantics a prompt can observe through them:
//  - numbers are doubles; integer and float differ only in how they print;
//  - arrays, objects, namespaces and functions are shared by reference, and == compares them by
//    identity (JavaScript's loose equality on the underlying values), so
//    `message == user_messages[-1]` is true exactly when both name the same message;
//  - only namespaces are mutable (`{% set ns.x = 1 %}`); arrays and objects never change after
//    construction.
//
// Value is a small handle (kind, a double and a shared pointer): cheap to copy. A Value may be
// read from many threads at once; namespaces may not be mutated concurrently (each render owns
// the namespaces it creates).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hubwatch::chat_template {

class Interpreter;
class Object;
struct Scope;
class Value;

enum class ValueKind : uint8_t {
  kUndefined,
  kNull,
  kBoolean,
  kInteger,
  kFloat,
  kString,
  kArray,
  kTuple,
  kObject,
  kKeywordArguments,  // the trailing keyword arguments of a call
  kNamespace,
  kFunction,
};

using Array = std::vector<Value>;

// Where a construct sits in the original template source (1-based).
struct SourcePos {
  int line = 0;
  int column = 0;
};

// A callable value: a macro, a builtin such as range() or a bound method such as
// 'abc'.upper. Implementations live with the interpreter.
class Function {
 public:
  virtual ~Function() = default;
  // args: positional arguments, then at most one trailing kKeywordArguments value.
  // call_scope: the scope of the call site (carries `caller` for {% call %} blocks).
  virtual Value Call(Interpreter& interpreter, std::vector<Value>& args,
                     const std::shared_ptr<Scope>& call_scope, SourcePos at) const = 0;
};

class Value {
 public:
  Value() = default;  // undefined
  static Value Null();
  static Value Boolean(bool b);
  static Value Integer(double v);
  static Value Float(double v);
  static Value String(std::string s);
  static Value MakeArray(Array items);
  static Value MakeTuple(Array items);
  static Value MakeObject(Object object);
  static Value MakeKeywordArguments(Object object);
  static Value MakeNamespace(Object object);
  static Value MakeFunction(std::shared_ptr<const Function> function);

  ValueKind kind() const { return kind_; }
  bool is(ValueKind k) const { return kind_ == k; }
  bool is_undefined() const { return kind_ == ValueKind::kUndefined; }
  bool is_null() const { return kind_ == ValueKind::kNull; }
  bool is_string() const { return kind_ == ValueKind::kString; }
  // Integer or float.
  bool is_number() const { return kind_ == ValueKind::kInteger || kind_ == ValueKind::kFloat; }
  // ArrayValue and its subclass TupleValue.
  bool is_array_like() const { return kind_ == ValueKind::kArray || kind_ == ValueKind::kTuple; }
  // ObjectValue and its subclass KeywordArgumentsValue.
  bool is_object_like() const {
    return kind_ == ValueKind::kObject || kind_ == ValueKind::kKeywordArguments;
  }
  // Values with named entries: objects, keyword arguments and namespaces.
  bool has_entries() const { return is_object_like() || kind_ == ValueKind::kNamespace; }

  // REQUIRES: boolean, integer or float (booleans read as 0/1).
  double number() const { return number_; }
  // REQUIRES: kBoolean
  bool boolean() const { return number_ != 0; }
  // REQUIRES: is_string()
  const std::string& str() const { return *static_cast<const std::string*>(ptr_.get()); }
  // REQUIRES: is_array_like()
  const Array& array() const { return *static_cast<const Array*>(ptr_.get()); }
  // REQUIRES: has_entries()
  const Object& object() const { return *static_cast<const Object*>(ptr_.get()); }
  // REQUIRES: kNamespace. Namespaces are the only mutable values.
  Object& namespace_object() const { return *static_cast<Object*>(ptr_.get()); }
  std::shared_ptr<Object> shared_namespace() const {
    return std::static_pointer_cast<Object>(ptr_);
  }
  // REQUIRES: kFunction
  const Function& function() const { return *static_cast<const Function*>(ptr_.get()); }
  // Identity of a shared value (strings excluded from identity comparisons by callers).
  const void* identity() const { return ptr_.get(); }

  // The reference's type name, e.g. "IntegerValue", used in error messages.
  std::string_view TypeName() const;

 private:
  Value(ValueKind kind, double number, std::shared_ptr<void> ptr)
      : kind_(kind), number_(number), ptr_(std::move(ptr)) {}

  ValueKind kind_ = ValueKind::kUndefined;
  double number_ = 0;
  std::shared_ptr<void> ptr_;
};

// An insertion-ordered string map (JavaScript Map semantics: re-setting a key keeps its place).
class Object {
 public:
  Object() = default;
  explicit Object(std::vector<std::pair<std::string, Value>> entries);

  const Value* Find(std::string_view key) const;
  void Set(std::string_view key, Value value);
  // Removes key; returns whether it was present.
  bool Erase(std::string_view key);
  void Clear() { entries_.clear(); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
};

// Python-style truthiness as the reference defines it (__bool__): empty strings, arrays and
// objects are false, namespaces and functions are always true.
bool Truthy(const Value& v);

// JavaScript truthiness of the underlying value (!!value): containers are always true.
bool RawTruthy(const Value& v);

// JavaScript == between the underlying values (number/string/boolean coercions, null ==
// undefined, identity for containers).
bool LooseEquals(const Value& a, const Value& b);

// JavaScript === between the underlying values.
bool StrictEquals(const Value& a, const Value& b);

// How a value prints in output ({{ x }}): the reference's RuntimeValue.toString(). Returns
// false (with *error set) for values it cannot print (tuples, functions).
bool ToDisplayString(const Value& v, std::string& out, std::string* error);

// JavaScript's String(underlying value), used by ~ and + concatenation: integral floats print
// without ".0", arrays join their elements with ",", objects print "[object Map]".
bool ToRawString(const Value& v, std::string& out, std::string* error);

}  // namespace hubwatch::chat_template
