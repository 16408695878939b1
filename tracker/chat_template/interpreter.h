#pragma once

// The tree-walking evaluator. One Interpreter renders one template once; it is not reusable
// and not thread-safe (each render creates its own). It never throws: the first error is kept
// (sticky), evaluation unwinds, and Render returns it. Errors name the construct and its line
// and column.
//
// Limits (see Limits in template.h) bound what an untrusted template can make it do: macro
// recursion depth, loop iterations, evaluation steps, and the size of the output and of every
// string or collection built on the way.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/template.h"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

// A variable scope: the globals, a for loop body, a macro call. Scopes are shared because a
// macro keeps the scope it was defined in.
struct Scope {
  explicit Scope(std::shared_ptr<Scope> parent_scope = nullptr) : parent(std::move(parent_scope)) {}

  // This scope's own variable, or null.
  const Value* FindOwn(std::string_view name) const;
  // Looks the name up through the parents; undefined when not found.
  Value Lookup(std::string_view name) const;
  void Set(std::string_view name, Value value);

  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> variables;
  bool is_call_block = false;  // the scope a {% call %} block passes to its macro
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  Interpreter(const RenderOptions& options, ScopePtr globals);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders a parsed template's statements. REQUIRES: called once.
  Result<std::string> Render(const std::vector<NodePtr>& program);

  // --- Used by filters, methods and functions ---
  bool failed() const { return error_.has_value(); }
  // Records the first error; returns undefined so callers can `return Fail(...)`.
  Value Fail(SourcePos pos, std::string message, ErrorCode code = ErrorCode::kInvalidInput);
  Value Evaluate(const Node& node, const ScopePtr& scope);
  // Renders statements into a fresh string (macro bodies, {% set %} and {% filter %} blocks).
  std::string RenderToString(const std::vector<NodePtr>& body, const ScopePtr& scope);
  // Evaluates call arguments: positional ones, then one trailing keyword-arguments value when
  // there are keyword arguments.
  Array EvaluateCallArguments(const std::vector<NodePtr>& args, const ScopePtr& scope);
  // Evaluates call arguments into positional and keyword parts.
  void EvaluateArguments(const std::vector<NodePtr>& args, const ScopePtr& scope, Array& positional,
                         Object& keyword);
  // Fails (kOverflow) when a string or collection of `size` would exceed the limits.
  bool CheckSize(size_t size, SourcePos pos);
  // Counts loop iterations against the limit.
  bool CountIterations(size_t n, SourcePos pos);
  // Every scope and namespace of a render is made through these, so that the render can free
  // them (and any reference cycles among them) when it ends.
  ScopePtr MakeScope(ScopePtr parent);
  void TrackNamespace(const Value& ns);  // REQUIRES: ns.is(ValueKind::kNamespace)
  // Macro call depth.
  bool EnterCall(SourcePos pos);
  void LeaveCall() { --call_depth_; }
  const RenderOptions& options() const { return options_; }

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  void RenderBlock(const std::vector<NodePtr>& body, const ScopePtr& scope, std::string& out);
  void RenderStatement(const Node& node, const ScopePtr& scope, std::string& out);
  void RenderFor(const Node& node, const ScopePtr& scope, std::string& out);
  void ExecuteSet(const Node& node, const ScopePtr& scope);
  void DefineMacro(const Node& node, const ScopePtr& scope);
  Value EvaluateCallBlock(const Node& node, const ScopePtr& scope);
  Value EvaluateMember(const Node& node, const ScopePtr& scope);
  Value EvaluateSlice(const Value& object, const Node& slice, const ScopePtr& scope);
  Value EvaluateCall(const Node& node, const ScopePtr& scope);
  Value EvaluateUnary(const Node& node, const ScopePtr& scope);
  Value EvaluateBinary(const Node& node, const ScopePtr& scope);
  Value EvaluateTest(const Node& node, const ScopePtr& scope);
  bool Append(std::string& out, std::string_view piece, SourcePos pos);

  // Remembers what a render created; drops expired entries as the list grows.
  template <class T>
  static void Track(std::vector<std::weak_ptr<T>>& list, const std::shared_ptr<T>& item) {
    if (list.size() >= 64 && list.size() == list.capacity()) {
      std::erase_if(list, [](const std::weak_ptr<T>& w) { return w.expired(); });
    }
    list.push_back(item);
  }

  RenderOptions options_;
  ScopePtr globals_;
  std::vector<std::weak_ptr<Scope>> scopes_;
  std::vector<std::weak_ptr<Object>> namespaces_;
  std::optional<Error> error_;
  Flow flow_ = Flow::kNormal;
  SourcePos flow_pos_;  // of the break / continue that set flow_
  int call_depth_ = 0;
  int64_t steps_ = 0;
  int64_t iterations_ = 0;
};

// How an error names a callee: "'name'", "method 'name'" or "expression" (expressions.cc).
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

// Global functions (methods.cc): namespace, range, raise_exception, strftime_now.
void DefineGlobals(Scope& globals);

// Compares two values the way the sort / dictsort filters do; fails the interpreter for
// values of different types.
int CompareForSort(Interpreter& interpreter, const Value& a, const Value& b, bool case_sensitive,
                   SourcePos pos);

// Looks up a dotted attribute path ("details.priority", "items.0") as sort and map do.
Value AttributePath(const Value& item, std::string_view path);

}  // namespace hubwatch::chat_template
