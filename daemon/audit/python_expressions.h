#pragma once

// Reading Python expressions from tokens without knowing any names: brackets matched once,
// literal strings (and their implicit concatenation), `None`, the environment's literal
// defaults, and a short reason for everything else (an f-string, a function call, the command
// line, ...). python_symbols.h adds names and attributes on top. Borrows the source and tokens,
// which must outlive it; immutable after construction.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/python_tokens.h"

namespace hubwatch::audit {

class PyTokenView {
 public:
  PyTokenView(std::string_view source, const std::vector<PyToken>& tokens);

  size_t size() const { return tokens_.size(); }
  const PyToken& operator[](size_t i) const { return tokens_[i]; }
  std::string_view Text(size_t i) const { return PyText(source_, tokens_[i]); }
  std::string StringValue(size_t i) const { return PyStringValue(source_, tokens_[i]); }
  // Where a kString token's body (the bytes between its quotes) is written.
  SourceSpan BodySpan(size_t i) const;
  bool IsOp(size_t i, std::string_view op) const;
  bool IsName(size_t i, std::string_view name) const;
  bool IsOpening(size_t i) const { return IsOp(i, "(") || IsOp(i, "[") || IsOp(i, "{"); }
  // The index of the bracket matching the one at `open` (size() when unbalanced).
  size_t MatchingBracket(size_t open) const { return match_[open]; }
  // The end of the comma-separated item starting at `from`, before `close`.
  size_t ItemEnd(size_t from, size_t close) const;
  // The source text of tokens [begin, end), quoted for a message.
  std::string Quoted(size_t begin, size_t end) const;

 private:
  std::string_view source_;
  const std::vector<PyToken>& tokens_;
  std::vector<size_t> match_;
};

// tokens [begin, end) as a value that needs no name lookup: a literal (string concatenation,
// `os.environ.get("X", "lit")`, `os.getenv("X", "lit")`), absent (`None`, nothing), or computed
// with the reason. A lone name or attribute comes back computed ("an expression").
SourceValue LiteralExpression(const PyTokenView& t, size_t begin, size_t end);

// `parser.add_argument(...)` with its '(' at `open`: the attribute it sets (`--model-id` ->
// "model_id", or dest=) and its default (computed when it has none). dest empty when the call
// names no option.
struct ArgparseOption {
  std::string dest;
  SourceValue value;
  size_t default_name = 0;  // not 0: the default is this name token, for the caller to resolve
};
ArgparseOption ReadArgparseOption(const PyTokenView& t, size_t open);

}  // namespace hubwatch::audit
