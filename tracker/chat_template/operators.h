#pragma once

// Operators on values, with the reference's JavaScript semantics: unary + and -, the binary
// operators other than the short-circuiting `and` / `or`, and slicing. The expression evaluator
// evaluates the operands; these compute the result.
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

// The bounds of object[start:stop:step]; a bound not given takes its default.
struct SliceBounds {
  double value[3] = {0, 0, 1};
  bool given[3] = {false, false, false};
};

// The slice of an array (a new array) or of a string (by code point).
// REQUIRES: object is array-like or a string.
Value Slice(const Value& object, const SliceBounds& bounds);

}  // namespace hubwatch::chat_template
