#pragma once

// Evaluates expression nodes to values: names, literals, attribute access and slicing, calls
// and their arguments, filters, tests and operators. Statements are the Interpreter's.
//
// Ownership: the Interpreter owns its evaluator and outlives it; the evaluator borrows the
// Interpreter (filters, tests, functions and {% call %} blocks take it) and its RenderState
// (errors, break / continue, limits). One render, one thread: not thread-safe.

#include <vector>

#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/render_state.h"
#include "tracker/chat_template/scope.h"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

class Interpreter;

class ExpressionEvaluator {
 public:
  ExpressionEvaluator(Interpreter& interpreter, RenderState& state)
      : interpreter_(interpreter), state_(state) {}
  ExpressionEvaluator(const ExpressionEvaluator&) = delete;
  ExpressionEvaluator& operator=(const ExpressionEvaluator&) = delete;

  // Undefined once the render has failed or a break / continue is pending.
  Value Evaluate(const Node& node, const ScopePtr& scope);
  // Evaluates call arguments: positional ones, then one trailing keyword-arguments value when
  // there are keyword arguments.
  Array EvaluateCallArguments(const std::vector<NodePtr>& args, const ScopePtr& scope);
  // Evaluates call arguments into positional and keyword parts.
  void EvaluateArguments(const std::vector<NodePtr>& args, const ScopePtr& scope, Array& positional,
                         Object& keyword);

 private:
  Value EvaluateMember(const Node& node, const ScopePtr& scope);
  Value EvaluateSlice(const Value& object, const Node& slice, const ScopePtr& scope);
  Value EvaluateCall(const Node& node, const ScopePtr& scope);
  Value EvaluateUnary(const Node& node, const ScopePtr& scope);
  Value EvaluateBinary(const Node& node, const ScopePtr& scope);
  Value EvaluateTest(const Node& node, const ScopePtr& scope);

  Interpreter& interpreter_;
  RenderState& state_;
};

}  // namespace hubwatch::chat_template
