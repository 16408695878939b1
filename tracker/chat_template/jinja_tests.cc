// The tests of `is` and of selectattr / rejectattr, as @huggingface/jinja's Environment.TESTS
// defines them.

#include <cmath>
#include <optional>
#include <string>

#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {

bool RunTest(Interpreter& in, std::string_view name, const Value& operand, const Value* argument,
             SourcePos pos, bool* result) {
  const ValueKind k = operand.kind();
  std::optional<bool> r;
  if (name == "boolean") r = k == ValueKind::kBoolean;
  if (name == "callable") r = k == ValueKind::kFunction;
  if (name == "odd" || name == "even") {
    r = false;
    if (k != ValueKind::kInteger) {
      in.Fail(pos, "test '" + std::string(name) + "': cannot apply to " +
                       std::string(operand.TypeName()));
    } else {
      const bool odd = std::fmod(operand.number(), 2) != 0;
      r = name == "odd" ? odd : !odd;
    }
  }
  if (name == "false") r = k == ValueKind::kBoolean && !operand.boolean();
  if (name == "true") r = k == ValueKind::kBoolean && operand.boolean();
  if (name == "none") r = k == ValueKind::kNull;
  if (name == "string") r = k == ValueKind::kString;
  if (name == "number") r = operand.is_number();
  if (name == "integer") r = k == ValueKind::kInteger;
  if (name == "iterable") r = k == ValueKind::kArray || k == ValueKind::kString;
  if (name == "mapping") r = operand.is_object_like();
  if (name == "sequence")
    r = operand.is_array_like() || operand.is_object_like() || operand.is_string();
  if (name == "lower") r = operand.is_string() && operand.str() == text::AsciiLower(operand.str());
  if (name == "upper") r = operand.is_string() && operand.str() == text::AsciiUpper(operand.str());
  if (name == "defined") r = k != ValueKind::kUndefined;
  if (name == "undefined") r = k == ValueKind::kUndefined;
  if (name == "equalto" || name == "eq") {
    r = false;
    if (!argument) {
      in.Fail(pos, "test '" + std::string(name) + "': needs a value to compare with");
    } else {
      r = StrictEquals(operand, *argument);
    }
  }
  if (!r) return false;
  *result = *r;
  return true;
}

}  // namespace hubwatch::chat_template
