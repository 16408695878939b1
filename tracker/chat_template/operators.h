#pragma once

// Operators on values, with the reference's JavaScript semantics: unary + and -, the binary
// operators other than the short-circuiting `and` / `or`, member access and subscripts, and
// slicing. The expression evaluator evaluates the operands; these compute the result.
//
// Pure apart from errors, which they record in the RenderState they are given (and then
// return undefined). Thread-safe as long as each thread passes its own RenderState.

#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/render_state.h"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

// `-operand` or `+operand`. REQUIRES: node is a kUnary with node.text "-" or "+".
Value UnaryOperation(RenderState& state, const Node& node, const Value& operand);

// `left op right` with op = node.text. REQUIRES: node is a kBinary, op is neither "and" nor "or".
Value BinaryOperation(RenderState& state, const Node& node, const Value& left, const Value& right);

// `object.property` or `object[property]`, the property already evaluated (a name after '.' is
// a string, an integer literal an integer): an entry of an object or a namespace, an element
// of an array or a character of a string at an integer index (negative ones count from the
// end), else a builtin of a string, an array or an object (LookupBuiltin); undefined when there
// is none. Fails for a key that is not a string, and for an index of an array or a string that
// is neither an integer nor a string. REQUIRES: node is the kMember (errors take its position).
Value MemberOperation(RenderState& state, const Node& node, const Value& object,
                      const Value& property);

// The bounds of object[start:stop:step]; a bound not given takes its default.
struct SliceBounds {
  double value[3] = {0, 0, 1};
  bool given[3] = {false, false, false};
};

// The slice of an array (a new array) or of a string (by code point).
// REQUIRES: object is array-like or a string.
Value Slice(const Value& object, const SliceBounds& bounds);

}  // namespace hubwatch::chat_template
