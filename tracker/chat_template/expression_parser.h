#pragma once

// Parses expressions by precedence climbing, from `x if c else y` down to unary signs; the
// operands below those are the PrimaryParser's.
//
// Ownership: owns its PrimaryParser; borrows the TokenCursor, which the StatementParser owns
// and which must outlive it. Not thread-safe: one per parse.

#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/primary_parser.h"
#include "tracker/chat_template/token_cursor.h"

namespace hubwatch::chat_template::parser_internal {

class ExpressionParser {
 public:
  explicit ExpressionParser(TokenCursor& cursor) : cursor_(cursor), primaries_(cursor, *this) {}
  ExpressionParser(const ExpressionParser&) = delete;
  ExpressionParser& operator=(const ExpressionParser&) = delete;

  NodePtr ParseExpression();
  // One expression, or a tuple of comma-separated ones; primaries only when `primary` (for
  // loop targets).
  NodePtr ParseExpressionSequence(bool primary);
  PrimaryParser& primaries() { return primaries_; }

 private:
  NodePtr ParseLogicalOr();
  NodePtr ParseLogicalAnd();
  NodePtr ParseLogicalNot();
  NodePtr ParseComparison();
  NodePtr ParseAdditive();
  NodePtr ParseMultiplicative();
  NodePtr ParsePower();
  NodePtr ParseTest();
  NodePtr ParseFilterExpression();
  NodePtr ParseUnarySign();

  // One left-associative binary precedence level: operand (op operand)*.
  template <class Matches>
  NodePtr ParseBinaryLevel(NodePtr (ExpressionParser::*operand)(), Matches matches) {
    NodePtr left = (this->*operand)();
    while (left && matches()) {
      const Token& op = cursor_.Next();
      left = Binary(op, std::move(left), (this->*operand)());
    }
    return left;
  }

  static NodePtr Binary(const Token& op, NodePtr lhs, NodePtr rhs) {
    if (!lhs || !rhs) return nullptr;
    NodePtr node = MakeNode(NodeKind::kBinary, op.pos);
    node->text = op.value;
    node->a = std::move(lhs);
    node->b = std::move(rhs);
    return node;
  }

  TokenCursor& cursor_;
  PrimaryParser primaries_;
};

}  // namespace hubwatch::chat_template::parser_internal
