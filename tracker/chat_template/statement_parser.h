#pragma once

// Parses a template's statements (text, comments, {{ }} and the {% %} tags) into the syntax
// tree; the expressions inside them are the ExpressionParser's. Internal to Parse (parser.h).
//
// Ownership: borrows the tokens, which must outlive it; owns the TokenCursor and the
// ExpressionParser of the parse. Not thread-safe: one per parse, run once.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/expression_parser.h"
#include "tracker/chat_template/lexer.h"
#include "tracker/chat_template/primary_parser.h"
#include "tracker/chat_template/token_cursor.h"

namespace hubwatch::chat_template::parser_internal {

class StatementParser {
 public:
  StatementParser(const std::vector<Token>& tokens, int max_nesting)
      : cursor_(tokens, max_nesting), expressions_(cursor_) {}
  StatementParser(const StatementParser&) = delete;
  StatementParser& operator=(const StatementParser&) = delete;

  // REQUIRES: called once.
  Result<std::vector<NodePtr>> Run() {
    std::vector<NodePtr> program;
    while (!cursor_.AtEnd() && !cursor_.failed()) {
      NodePtr node = ParseAny("");
      if (node) program.push_back(std::move(node));
    }
    if (cursor_.failed()) return cursor_.error();
    return program;
  }

 private:
  // Parses statements until one of `names` opens; `missing` describes the awaited tag.
  bool ParseBlock(std::initializer_list<std::string_view> names, std::vector<NodePtr>& body,
                  const std::string& missing) {
    while (!cursor_.failed() && !cursor_.IsStatement(names)) {
      NodePtr node = ParseAny(missing);
      if (node) body.push_back(std::move(node));
    }
    return !cursor_.failed();
  }

  NodePtr ParseAny(const std::string& missing);
  NodePtr ParseStatement();
  NodePtr ParseSet(SourcePos pos);
  NodePtr ParseIf(SourcePos pos);
  NodePtr ParseMacro(SourcePos pos);
  NodePtr ParseFor(SourcePos pos);
  NodePtr ParseCallBlock(SourcePos pos);
  NodePtr ParseFilterBlock(SourcePos pos);

  TokenCursor cursor_;
  ExpressionParser expressions_;
  PrimaryParser& primaries_ = expressions_.primaries();
};

}  // namespace hubwatch::chat_template::parser_internal
