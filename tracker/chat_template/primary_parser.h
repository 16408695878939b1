#pragma once

// Parses primaries (literals, names, parenthesized expressions, array and object literals) and
// what may follow them: attribute access, subscripts and slices, calls and their argument
// lists. Operators are the ExpressionParser's.
//
// Ownership: the ExpressionParser owns its PrimaryParser and outlives it; the PrimaryParser
// borrows it (for the expressions inside brackets and argument lists) and the shared
// TokenCursor. Not thread-safe: one per parse.

#include <vector>

#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/token_cursor.h"

namespace hubwatch::chat_template::parser_internal {

class ExpressionParser;

// Whether an argument list is a call's or a macro's parameter declaration.
enum class ArgsMode { kCall, kParameters };

class PrimaryParser {
 public:
  PrimaryParser(TokenCursor& cursor, ExpressionParser& expressions)
      : cursor_(cursor), expressions_(expressions) {}
  PrimaryParser(const PrimaryParser&) = delete;
  PrimaryParser& operator=(const PrimaryParser&) = delete;

  // A primary alone.
  NodePtr ParsePrimary();
  // A primary with its attributes, subscripts and calls.
  NodePtr ParseCallMember();
  // The call of `callee` (the current token is its '('), and what follows it.
  NodePtr ParseCallExpression(NodePtr callee);
  // `( ... )` into args.
  bool ParseArgs(ArgsMode mode, std::vector<NodePtr>& args);

 private:
  NodePtr ParseMemberArguments(SourcePos pos);
  NodePtr ParseMemberExpression(NodePtr object);

  TokenCursor& cursor_;
  ExpressionParser& expressions_;
};

}  // namespace hubwatch::chat_template::parser_internal
