#pragma once

// The tree-walking renderer. One Interpreter renders one template once; it is not reusable
// and not thread-safe (each render creates its own). It executes statements itself (what a for
// loop iterates and binds is for_loop.h's), evaluates expressions with the ExpressionEvaluator
// it owns, and keeps the render's errors, limits and scopes in the RenderState it owns. It
// never throws: the first error is kept (sticky), evaluation unwinds, and Render returns it.
// Errors name the construct and its line and column.
//
// Limits (see Limits in template.h) bound what an untrusted template can make it do: macro
// recursion depth, loop iterations, evaluation steps, and the size of the output and of every
// string or collection built on the way.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/expression_evaluator.h"
#include "tracker/chat_template/render_state.h"
#include "tracker/chat_template/scope.h"
#include "tracker/chat_template/template.h"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

class Interpreter {
 public:
  Interpreter(const RenderOptions& options, ScopePtr globals);
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders a parsed template's statements. REQUIRES: called once.
  Result<std::string> Render(const std::vector<NodePtr>& program);

  // --- Used by filters, methods and functions ---
  bool failed() const { return state_.failed(); }
  // Records the first error; returns undefined so callers can `return Fail(...)`.
  Value Fail(SourcePos pos, std::string message, ErrorCode code = ErrorCode::kInvalidInput) {
    return state_.Fail(pos, std::move(message), code);
  }
  Value Evaluate(const Node& node, const ScopePtr& scope) {
    return evaluator_.Evaluate(node, scope);
  }
  // Renders statements into a fresh string (macro bodies, {% set %} and {% filter %} blocks).
  std::string RenderToString(const std::vector<NodePtr>& body, const ScopePtr& scope);
  // See ExpressionEvaluator.
  Array EvaluateCallArguments(const std::vector<NodePtr>& args, const ScopePtr& scope) {
    return evaluator_.EvaluateCallArguments(args, scope);
  }
  void EvaluateArguments(const std::vector<NodePtr>& args, const ScopePtr& scope, Array& positional,
                         Object& keyword) {
    evaluator_.EvaluateArguments(args, scope, positional, keyword);
  }
  // Limits and scope tracking: see RenderState.
  bool CheckSize(size_t size, SourcePos pos) { return state_.CheckSize(size, pos); }
  bool CountIterations(size_t n, SourcePos pos) { return state_.CountIterations(n, pos); }
  ScopePtr MakeScope(ScopePtr parent) { return state_.MakeScope(std::move(parent)); }
  void TrackNamespace(const Value& ns) { state_.TrackNamespace(ns); }
  bool EnterCall(SourcePos pos) { return state_.EnterCall(pos); }
  void LeaveCall() { state_.LeaveCall(); }
  const RenderOptions& options() const { return state_.options(); }

  // A {% call %} block, as a statement or as a value (used by the expression evaluator).
  Value EvaluateCallBlock(const Node& node, const ScopePtr& scope);

 private:
  using Flow = RenderState::Flow;

  void RenderBlock(const std::vector<NodePtr>& body, const ScopePtr& scope, std::string& out);
  void RenderStatement(const Node& node, const ScopePtr& scope, std::string& out);
  void RenderFor(const Node& node, const ScopePtr& scope, std::string& out);
  void ExecuteSet(const Node& node, const ScopePtr& scope);

  // Declared before state_, which empties the globals when the render ends, so that they are
  // still alive then.
  ScopePtr globals_;
  RenderState state_;
  ExpressionEvaluator evaluator_;
};

// How an error names a callee: "'name'", "method 'name'" or "expression"
// (expression_evaluator.cc).
std::string DescribeCallee(const Node& callee);

// Macros and the `caller` of {% call %} blocks (macros.cc). `node` (a kMacro or kCallBlock) must
// outlive the function; `scope` is where the macro was defined.
std::shared_ptr<const Function> MakeMacro(const Node& node, ScopePtr scope);
std::shared_ptr<const Function> MakeCaller(const Node& node, ScopePtr scope);

// Filters (filters.cc, sequence_filters.cc, text_filters.cc). `filter` is the Identifier or
// Call node after the '|'.
Value ApplyFilter(Interpreter& interpreter, const Value& operand, const Node& filter,
                  const ScopePtr& scope);

// Tests used by `is` and by selectattr / rejectattr (jinja_tests.cc). Returns false for unknown
// names; sets *result otherwise (or fails the interpreter for tests that reject the operand).
bool RunTest(Interpreter& interpreter, std::string_view name, const Value& operand,
             const Value* argument, SourcePos pos, bool* result);

// Attribute access on builtins (methods.cc): `'abc'.upper`, `d.items`, `xs.length`. Returns
// undefined when the value has no such builtin.
Value LookupBuiltin(const Value& object, std::string_view name);

// Calls the builtin method `name` of receiver (a string or an object) directly, as filters do
// ('abc' | upper). REQUIRES: LookupBuiltin(receiver, name) is a function.
Value CallBuiltin(Interpreter& interpreter, const Value& receiver, std::string_view name,
                  std::vector<Value>& args, SourcePos pos);

// Global functions and constants (globals.cc): namespace, range, raise_exception, strftime_now.
void DefineGlobals(Scope& globals);

// Compares two values the way the sort / dictsort filters do; fails the interpreter for
// values of different types.
int CompareForSort(Interpreter& interpreter, const Value& a, const Value& b, bool case_sensitive,
                   SourcePos pos);

// Looks up a dotted attribute path ("details.priority", "items.0") as sort and map do.
Value AttributePath(const Value& item, std::string_view path);

}  // namespace hubwatch::chat_template
