#include "tracker/chat_template/expression_parser.h"

#include <utility>

namespace hubwatch::chat_template::parser_internal {

NodePtr ExpressionParser::ParseExpressionSequence(bool primary) {
  const SourcePos pos = cursor_.Here();
  NodePtr first = primary ? primaries_.ParsePrimary() : ParseExpression();
  if (!first || !cursor_.Is(TokenType::kComma)) return first;
  NodePtr tuple = MakeNode(NodeKind::kTupleLiteral, pos);
  tuple->items.push_back(std::move(first));
  while (!cursor_.failed()) {
    cursor_.Skip();  // ,
    NodePtr item = primary ? primaries_.ParsePrimary() : ParseExpression();
    if (!item) return nullptr;
    tuple->items.push_back(std::move(item));
    if (!cursor_.Is(TokenType::kComma)) break;
  }
  return cursor_.failed() ? nullptr : std::move(tuple);
}

NodePtr ExpressionParser::ParseExpression() {
  TokenCursor::DepthGuard guard(cursor_);
  if (cursor_.failed()) return nullptr;
  NodePtr value = ParseLogicalOr();
  if (!value || !cursor_.IsIdentifier("if")) return value;
  const SourcePos pos = cursor_.Here();
  cursor_.Skip();
  NodePtr test = ParseLogicalOr();
  if (!test) return nullptr;
  if (cursor_.IsIdentifier("else")) {
    cursor_.Skip();
    NodePtr otherwise = ParseExpression();
    if (!otherwise) return nullptr;
    NodePtr node = MakeNode(NodeKind::kTernary, pos);
    node->a = std::move(test);
    node->b = std::move(value);
    node->c = std::move(otherwise);
    return node;
  }
  NodePtr node = MakeNode(NodeKind::kSelect, pos);
  node->a = std::move(value);
  node->b = std::move(test);
  return node;
}

NodePtr ExpressionParser::ParseLogicalOr() {
  return ParseBinaryLevel(&ExpressionParser::ParseLogicalAnd,
                          [&] { return cursor_.IsIdentifier("or"); });
}

NodePtr ExpressionParser::ParseLogicalAnd() {
  return ParseBinaryLevel(&ExpressionParser::ParseLogicalNot,
                          [&] { return cursor_.IsIdentifier("and"); });
}

NodePtr ExpressionParser::ParseLogicalNot() {
  TokenCursor::DepthGuard guard(cursor_);
  NodePtr result;
  while (!cursor_.failed() && cursor_.IsIdentifier("not")) {
    const Token& op = cursor_.Next();
    NodePtr operand = ParseLogicalNot();
    if (!operand) return nullptr;
    result = MakeNode(NodeKind::kUnary, op.pos);
    result->text = "not";
    result->a = std::move(operand);
  }
  if (cursor_.failed()) return nullptr;
  return result ? std::move(result) : ParseComparison();
}

NodePtr ExpressionParser::ParseComparison() {
  NodePtr left = ParseAdditive();
  while (left) {
    Token op;
    if (cursor_.IsIdentifier("not") && cursor_.IsIdentifier("in", 1)) {
      op = Token{TokenType::kIdentifier, "not in", cursor_.Peek()->pos};
      cursor_.Skip(2);
    } else if (cursor_.IsIdentifier("in") || cursor_.Is(TokenType::kComparisonBinaryOperator)) {
      op = cursor_.Next();
    } else {
      break;
    }
    left = Binary(op, std::move(left), ParseAdditive());
  }
  return left;
}

NodePtr ExpressionParser::ParseAdditive() {
  return ParseBinaryLevel(&ExpressionParser::ParseMultiplicative,
                          [&] { return cursor_.Is(TokenType::kAdditiveBinaryOperator); });
}

NodePtr ExpressionParser::ParseMultiplicative() {
  return ParseBinaryLevel(&ExpressionParser::ParsePower,
                          [&] { return cursor_.Is(TokenType::kMultiplicativeBinaryOperator); });
}

NodePtr ExpressionParser::ParsePower() {
  return ParseBinaryLevel(&ExpressionParser::ParseTest,
                          [&] { return cursor_.Is(TokenType::kExponentiationBinaryOperator); });
}

NodePtr ExpressionParser::ParseTest() {
  NodePtr operand = ParseFilterExpression();
  while (operand && cursor_.IsIdentifier("is")) {
    const SourcePos pos = cursor_.Here();
    cursor_.Skip();
    const bool negate = cursor_.IsIdentifier("not");
    if (negate) cursor_.Skip();
    NodePtr name = primaries_.ParsePrimary();
    if (!name) return nullptr;
    if (name->kind != NodeKind::kIdentifier)
      return cursor_.Fail(name->pos, "expected a test name after 'is'");
    NodePtr node = MakeNode(NodeKind::kTest, pos);
    node->text = name->text;
    node->flag = negate;
    node->a = std::move(operand);
    operand = std::move(node);
  }
  return operand;
}

NodePtr ExpressionParser::ParseFilterExpression() {
  NodePtr operand = ParseUnarySign();
  while (operand && cursor_.Is(TokenType::kPipe)) {
    cursor_.Skip();
    NodePtr filter = primaries_.ParsePrimary();
    if (!filter) return nullptr;
    if (filter->kind != NodeKind::kIdentifier)
      return cursor_.Fail(filter->pos, "expected a filter name after '|'");
    const SourcePos pos = filter->pos;
    if (cursor_.Is(TokenType::kOpenParen))
      filter = primaries_.ParseCallExpression(std::move(filter));
    if (!filter) return nullptr;
    NodePtr node = MakeNode(NodeKind::kFilter, pos);
    node->a = std::move(operand);
    node->b = std::move(filter);
    operand = std::move(node);
  }
  return operand;
}

NodePtr ExpressionParser::ParseUnarySign() {
  TokenCursor::DepthGuard guard(cursor_);
  if (cursor_.failed()) return nullptr;
  const Token* token = cursor_.Peek();
  if (token &&
      (token->type == TokenType::kUnaryOperator ||
       token->type == TokenType::kAdditiveBinaryOperator) &&
      (token->value == "-" || token->value == "+")) {
    cursor_.Skip();
    NodePtr operand = ParseUnarySign();
    if (!operand) return nullptr;
    NodePtr node = MakeNode(NodeKind::kUnary, token->pos);
    node->text = token->value;
    node->a = std::move(operand);
    return node;
  }
  return primaries_.ParseCallMember();
}

}  // namespace hubwatch::chat_template::parser_internal
