// The expression half of the parser: precedence climbing from `x if c else y` down to
// primaries, argument lists, attributes, subscripts and slices.

#include <set>
#include <string>
#include <utility>

#include "tracker/chat_template/js_number.h"
#include "tracker/chat_template/parser_internal.h"

namespace hubwatch::chat_template::parser_internal {

NodePtr Parser::ParseExpressionSequence(bool primary) {
  const SourcePos pos = Here();
  NodePtr first = primary ? ParsePrimary() : ParseExpression();
  if (!first || !Is(TokenType::kComma)) return first;
  NodePtr tuple = MakeNode(NodeKind::kTupleLiteral, pos);
  tuple->items.push_back(std::move(first));
  while (!failed()) {
    ++cur_;  // ,
    NodePtr item = primary ? ParsePrimary() : ParseExpression();
    if (!item) return nullptr;
    tuple->items.push_back(std::move(item));
    if (!Is(TokenType::kComma)) break;
  }
  return failed() ? nullptr : std::move(tuple);
}

NodePtr Parser::ParseExpression() {
  DepthGuard guard(*this);
  if (failed()) return nullptr;
  NodePtr value = ParseLogicalOr();
  if (!value || !IsIdentifier("if")) return value;
  const SourcePos pos = Here();
  ++cur_;
  NodePtr test = ParseLogicalOr();
  if (!test) return nullptr;
  if (IsIdentifier("else")) {
    ++cur_;
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

NodePtr Parser::ParseLogicalOr() {
  return ParseBinaryLevel(&Parser::ParseLogicalAnd, [&] { return IsIdentifier("or"); });
}

NodePtr Parser::ParseLogicalAnd() {
  return ParseBinaryLevel(&Parser::ParseLogicalNot, [&] { return IsIdentifier("and"); });
}

NodePtr Parser::ParseLogicalNot() {
  DepthGuard guard(*this);
  NodePtr result;
  while (!failed() && IsIdentifier("not")) {
    const Token& op = t_[cur_++];
    NodePtr operand = ParseLogicalNot();
    if (!operand) return nullptr;
    result = MakeNode(NodeKind::kUnary, op.pos);
    result->text = "not";
    result->a = std::move(operand);
  }
  if (failed()) return nullptr;
  return result ? std::move(result) : ParseComparison();
}

NodePtr Parser::ParseComparison() {
  NodePtr left = ParseAdditive();
  while (left) {
    Token op;
    if (IsIdentifier("not") && IsIdentifier("in", 1)) {
      op = Token{TokenType::kIdentifier, "not in", Peek()->pos};
      cur_ += 2;
    } else if (IsIdentifier("in") || Is(TokenType::kComparisonBinaryOperator)) {
      op = t_[cur_++];
    } else {
      break;
    }
    left = Binary(op, std::move(left), ParseAdditive());
  }
  return left;
}

NodePtr Parser::ParseAdditive() {
  return ParseBinaryLevel(&Parser::ParseMultiplicative,
                          [&] { return Is(TokenType::kAdditiveBinaryOperator); });
}

NodePtr Parser::ParseMultiplicative() {
  return ParseBinaryLevel(&Parser::ParsePower,
                          [&] { return Is(TokenType::kMultiplicativeBinaryOperator); });
}

NodePtr Parser::ParsePower() {
  return ParseBinaryLevel(&Parser::ParseTest,
                          [&] { return Is(TokenType::kExponentiationBinaryOperator); });
}

NodePtr Parser::ParseTest() {
  NodePtr operand = ParseFilterExpression();
  while (operand && IsIdentifier("is")) {
    const SourcePos pos = Here();
    ++cur_;
    const bool negate = IsIdentifier("not");
    if (negate) ++cur_;
    NodePtr name = ParsePrimary();
    if (!name) return nullptr;
    if (name->kind != NodeKind::kIdentifier)
      return Fail(name->pos, "expected a test name after 'is'");
    NodePtr node = MakeNode(NodeKind::kTest, pos);
    node->text = name->text;
    node->flag = negate;
    node->a = std::move(operand);
    operand = std::move(node);
  }
  return operand;
}

NodePtr Parser::ParseFilterExpression() {
  NodePtr operand = ParseUnarySign();
  while (operand && Is(TokenType::kPipe)) {
    ++cur_;
    NodePtr filter = ParsePrimary();
    if (!filter) return nullptr;
    if (filter->kind != NodeKind::kIdentifier)
      return Fail(filter->pos, "expected a filter name after '|'");
    const SourcePos pos = filter->pos;
    if (Is(TokenType::kOpenParen)) filter = ParseCallExpression(std::move(filter));
    if (!filter) return nullptr;
    NodePtr node = MakeNode(NodeKind::kFilter, pos);
    node->a = std::move(operand);
    node->b = std::move(filter);
    operand = std::move(node);
  }
  return operand;
}

NodePtr Parser::ParseUnarySign() {
  DepthGuard guard(*this);
  if (failed()) return nullptr;
  const Token* token = Peek();
  if (token &&
      (token->type == TokenType::kUnaryOperator ||
       token->type == TokenType::kAdditiveBinaryOperator) &&
      (token->value == "-" || token->value == "+")) {
    ++cur_;
    NodePtr operand = ParseUnarySign();
    if (!operand) return nullptr;
    NodePtr node = MakeNode(NodeKind::kUnary, token->pos);
    node->text = token->value;
    node->a = std::move(operand);
    return node;
  }
  return ParseCallMember();
}

NodePtr Parser::ParseCallMember() {
  NodePtr member = ParseMemberExpression(ParsePrimary());
  if (member && Is(TokenType::kOpenParen)) return ParseCallExpression(std::move(member));
  return member;
}

NodePtr Parser::ParseCallExpression(NodePtr callee) {
  DepthGuard guard(*this);
  if (failed() || !callee) return nullptr;
  NodePtr call = MakeNode(NodeKind::kCall, callee->pos);
  call->a = std::move(callee);
  if (!ParseArgs(ArgsMode::kCall, call->items)) return nullptr;
  NodePtr expression = ParseMemberExpression(std::move(call));
  if (expression && Is(TokenType::kOpenParen)) return ParseCallExpression(std::move(expression));
  return expression;
}

bool Parser::ParseArgs(ArgsMode mode, std::vector<NodePtr>& args) {
  if (!Expect(TokenType::kOpenParen, "'('")) return false;
  std::set<std::string> names;
  bool saw_keyword = false;
  bool saw_spread = false;
  while (!failed() && !Is(TokenType::kCloseParen)) {
    if (!Peek()) {
      Fail(Here(), "expected ')' to close the argument list");
      break;
    }
    const SourcePos pos = Here();
    const bool keyword_spread = Is(TokenType::kExponentiationBinaryOperator);
    const bool spread = Is(TokenType::kMultiplicativeBinaryOperator) && Peek()->value == "*";
    if (mode == ArgsMode::kParameters && (keyword_spread || spread)) {
      Fail(pos, "argument unpacking is not allowed in parameter declarations");
      break;
    }
    if (keyword_spread) {
      ++cur_;
      NodePtr node = MakeNode(NodeKind::kKeywordSpread, pos);
      node->a = ParseExpression();
      if (!node->a) break;
      args.push_back(std::move(node));
      if (Is(TokenType::kComma)) ++cur_;
      if (!Is(TokenType::kCloseParen)) Fail(Here(), "'**' must be applied to the final argument");
      break;
    }
    NodePtr argument;
    if (spread) {
      if (saw_spread) {
        Fail(pos, "only one '*' argument unpacking is allowed");
        break;
      }
      saw_spread = true;
      ++cur_;
      argument = MakeNode(NodeKind::kSpread, pos);
      argument->a = ParseExpression();
      if (!argument->a) break;
    } else {
      argument = ParseExpression();
      if (!argument) break;
      if (Is(TokenType::kEquals)) {
        ++cur_;
        if (argument->kind != NodeKind::kIdentifier) {
          Fail(argument->pos, mode == ArgsMode::kParameters ? "expected a parameter name"
                                                            : "expected a keyword argument name");
          break;
        }
        NodePtr keyword = MakeNode(NodeKind::kKeywordArgument, argument->pos);
        keyword->text = argument->text;
        keyword->a = ParseExpression();
        if (!keyword->a) break;
        argument = std::move(keyword);
      }
      if (mode == ArgsMode::kParameters) {
        if (argument->kind != NodeKind::kIdentifier &&
            argument->kind != NodeKind::kKeywordArgument) {
          Fail(argument->pos, "expected a parameter name");
          break;
        }
        if (!names.insert(argument->text).second) {
          Fail(argument->pos, "duplicate parameter name '" + argument->text + "'");
          break;
        }
      }
      if (argument->kind == NodeKind::kKeywordArgument) {
        saw_keyword = true;
      } else if (saw_keyword) {
        Fail(argument->pos, mode == ArgsMode::kCall
                                ? "positional arguments must come before keyword arguments"
                                : "non-default parameter follows a default parameter");
        break;
      } else if (saw_spread) {
        Fail(argument->pos, "positional arguments must not follow '*' argument unpacking");
        break;
      }
    }
    args.push_back(std::move(argument));
    if (Is(TokenType::kComma)) ++cur_;
  }
  return Expect(TokenType::kCloseParen, "')' to close the argument list");
}

NodePtr Parser::ParseMemberArguments(SourcePos pos) {
  std::vector<NodePtr> parts;
  bool is_slice = false;
  while (!failed() && !Is(TokenType::kCloseSquareBracket)) {
    if (!Peek()) return Fail(Here(), "expected ']'");
    if (Is(TokenType::kColon)) {
      parts.push_back(nullptr);
      ++cur_;
      is_slice = true;
    } else {
      NodePtr part = ParseExpression();
      if (!part) return nullptr;
      parts.push_back(std::move(part));
      if (Is(TokenType::kColon)) {
        ++cur_;
        is_slice = true;
      }
    }
  }
  if (failed()) return nullptr;
  if (parts.empty()) return Fail(pos, "expected an index or a slice inside '[]'");
  if (!is_slice) return std::move(parts[0]);
  if (parts.size() > 3) return Fail(pos, "a slice takes at most 3 parts");
  NodePtr slice = MakeNode(NodeKind::kSlice, pos);
  parts.resize(3);
  slice->a = std::move(parts[0]);
  slice->b = std::move(parts[1]);
  slice->c = std::move(parts[2]);
  return slice;
}

NodePtr Parser::ParseMemberExpression(NodePtr object) {
  while (object && (Is(TokenType::kDot) || Is(TokenType::kOpenSquareBracket))) {
    const Token& op = t_[cur_++];
    const bool computed = op.type == TokenType::kOpenSquareBracket;
    NodePtr property;
    if (computed) {
      property = ParseMemberArguments(op.pos);
      if (!property || !Expect(TokenType::kCloseSquareBracket, "']'")) return nullptr;
    } else {
      property = ParsePrimary();
      if (!property) return nullptr;
      if (property->kind != NodeKind::kIdentifier && property->kind != NodeKind::kIntegerLiteral) {
        return Fail(property->pos, "expected a name or an integer after '.'");
      }
    }
    // Errors point at the property name of obj.name, at the '[' of obj[expr].
    NodePtr member = MakeNode(NodeKind::kMember, computed ? op.pos : property->pos);
    member->flag = computed;
    member->a = std::move(object);
    member->b = std::move(property);
    object = std::move(member);
  }
  return object;
}

NodePtr Parser::ParsePrimary() {
  if (failed()) return nullptr;
  const Token* token = Peek();
  if (!token) return Fail(Here(), "unexpected end of template inside an expression");
  ++cur_;
  switch (token->type) {
    case TokenType::kNumericLiteral: {
      const bool is_float = token->value.find('.') != std::string::npos;
      NodePtr node =
          MakeNode(is_float ? NodeKind::kFloatLiteral : NodeKind::kIntegerLiteral, token->pos);
      node->number = js::StringToNumber(token->value);
      return node;
    }
    case TokenType::kStringLiteral: {
      NodePtr node = MakeNode(NodeKind::kStringLiteral, token->pos);
      node->text = token->value;
      while (Is(TokenType::kStringLiteral)) node->text += t_[cur_++].value;
      node->literal = Value::String(node->text);
      return node;
    }
    case TokenType::kIdentifier: {
      NodePtr node = MakeNode(NodeKind::kIdentifier, token->pos);
      node->text = token->value;
      return node;
    }
    case TokenType::kOpenParen: {
      NodePtr expression = ParseExpressionSequence(false);
      if (!expression || !Expect(TokenType::kCloseParen, "')'")) return nullptr;
      return expression;
    }
    case TokenType::kOpenSquareBracket: {
      NodePtr node = MakeNode(NodeKind::kArrayLiteral, token->pos);
      while (!failed() && !Is(TokenType::kCloseSquareBracket)) {
        NodePtr item = ParseExpression();
        if (!item) return nullptr;
        node->items.push_back(std::move(item));
        if (Is(TokenType::kComma)) ++cur_;
      }
      ++cur_;  // ]
      return failed() ? nullptr : std::move(node);
    }
    case TokenType::kOpenCurlyBracket: {
      NodePtr node = MakeNode(NodeKind::kObjectLiteral, token->pos);
      while (!failed() && !Is(TokenType::kCloseCurlyBracket)) {
        NodePtr key = ParseExpression();
        if (!key || !Expect(TokenType::kColon, "':' between key and value")) return nullptr;
        NodePtr value = ParseExpression();
        if (!value) return nullptr;
        node->items.push_back(std::move(key));
        node->items.push_back(std::move(value));
        if (Is(TokenType::kComma)) ++cur_;
      }
      ++cur_;  // }
      return failed() ? nullptr : std::move(node);
    }
    default:
      return Fail(token->pos, "unexpected " + Describe(*token) + " in an expression");
  }
}

}  // namespace hubwatch::chat_template::parser_internal
