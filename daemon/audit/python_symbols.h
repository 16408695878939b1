#pragma once

// PythonSymbols: what one Python file assigns, read once from its tokens, so an argument like
// `MODEL_ID`, `args.model_id` or `os.environ.get("M", "org/x")` can be traced to the literal it
// holds or to why it cannot be (a function call, an f-string, a parameter, the environment).
// Scopes are not modelled: a name resolves to its last assignment before the use (or its first
// one, for module constants defined below the functions that use them). Reads:
//   NAME = <expr> and NAME: T = <expr>             (statement level)
//   def f(NAME, NAME="lit")                         (parameters, with literal defaults)
//   f(NAME=<expr>) / f(<expr>) of a plain def f     (a parameter without a default takes the
//                                                    value every call of f in the file passes,
//                                                    when all calls pass the same literal)
//   parser.add_argument("--name", default="lit")    (argparse options, as args.name)
//   name: T = field(default="lit")                  (dataclass fields, as args.name)
// Not thread-safe; borrows the source and tokens, which must outlive it.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/python_expressions.h"
#include "daemon/audit/python_tokens.h"

namespace hubwatch::audit {

class PythonSymbols {
 public:
  PythonSymbols(std::string_view source, const std::vector<PyToken>& tokens);

  const PyTokenView& view() const { return view_; }

  // The value of the expression tokens[begin, end), used at token `begin`. Marks the
  // assignments it reads as consumed.
  SourceValue Evaluate(size_t begin, size_t end) { return EvaluateAt(begin, end, begin, 0); }

  // Calls `visit(token_index)` for each string literal held by an assignment to a variable
  // whose name says it holds models (MODEL_ID, model_name, models, ...) that no recognised call
  // reads: the file names a model there but uses it some other way.
  template <class Visit>
  void ForEachUnusedModelLiteral(Visit visit) const {
    for (const auto& [name, list] : assignments_) {
      for (const Assignment& a : list) {
        if (a.consumed || !a.model_like) continue;
        for (size_t index : a.literals) visit(index);
      }
    }
  }

 private:
  struct Assignment {
    size_t position = 0;  // token index of the name
    SourceValue value;
    std::string alias;              // the RHS is another bare name
    std::vector<size_t> literals;   // string tokens of a literal-only RHS
    bool model_like = false;        // the name says it holds models
    bool self_described = false;    // value.why names the variable itself (a parameter)
    std::string function;           // a parameter without a default: its plain function
    int parameter_index = -1;       //   and its position there (-1: keyword only)
    mutable bool consumed = false;  // a recognised call reads it
  };

  void ReadStatements();
  void ReadAssignment(size_t name, size_t eq, size_t end);
  void ReadParameters(size_t def);
  SourceValue FieldDefault(size_t name, size_t open, size_t end) const;
  SourceValue EvaluateAt(size_t begin, size_t end, size_t use, int depth);
  SourceValue ResolveName(std::string_view name, size_t use, int depth);
  SourceValue PassedValue(const Assignment& parameter, std::string_view name, int depth);

  // Where each name is called as a plain function (`f(`, not `x.f(`): the '(' token indexes.
  std::unordered_map<std::string, std::vector<size_t>> calls_;

  PyTokenView view_;
  std::unordered_map<std::string, std::vector<Assignment>> assignments_;
  std::unordered_map<std::string, SourceValue> attributes_;
};

}  // namespace hubwatch::audit
