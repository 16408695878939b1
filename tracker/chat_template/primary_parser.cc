#include "tracker/chat_template/primary_parser.h"

#include <set>
#include <string>
#include <utility>

#include "tracker/chat_template/expression_parser.h"
#include "tracker/chat_template/js_number.h"

namespace hubwatch::chat_template::parser_internal {

NodePtr PrimaryParser::ParseCallMember() {
  NodePtr member = ParseMemberExpression(ParsePrimary());
  if (member && cursor_.Is(TokenType::kOpenParen)) return ParseCallExpression(std::move(member));
  return member;
}

NodePtr PrimaryParser::ParseCallExpression(NodePtr callee) {
  TokenCursor::DepthGuard guard(cursor_);
  if (cursor_.failed() || !callee) return nullptr;
  NodePtr call = MakeNode(NodeKind::kCall, callee->pos);
  call->a = std::move(callee);
  if (!ParseArgs(ArgsMode::kCall, call->items)) return nullptr;
  NodePtr expression = ParseMemberExpression(std::move(call));
  if (expression && cursor_.Is(TokenType::kOpenParen))
    return ParseCallExpression(std::move(expression));
  return expression;
}

bool PrimaryParser::ParseArgs(ArgsMode mode, std::vector<NodePtr>& args) {
  if (!cursor_.Expect(TokenType::kOpenParen, "'('")) return false;
  std::set<std::string> names;
  bool saw_keyword = false;
  bool saw_spread = false;
  while (!cursor_.failed() && !cursor_.Is(TokenType::kCloseParen)) {
    if (!cursor_.Peek()) {
      cursor_.Fail(cursor_.Here(), "expected ')' to close the argument list");
      break;
    }
    const SourcePos pos = cursor_.Here();
    const bool keyword_spread = cursor_.Is(TokenType::kExponentiationBinaryOperator);
    const bool spread =
        cursor_.Is(TokenType::kMultiplicativeBinaryOperator) && cursor_.Peek()->value == "*";
    if (mode == ArgsMode::kParameters && (keyword_spread || spread)) {
      cursor_.Fail(pos, "argument unpacking is not allowed in parameter declarations");
      break;
    }
    if (keyword_spread) {
      cursor_.Skip();
      NodePtr node = MakeNode(NodeKind::kKeywordSpread, pos);
      node->a = expressions_.ParseExpression();
      if (!node->a) break;
      args.push_back(std::move(node));
      if (cursor_.Is(TokenType::kComma)) cursor_.Skip();
      if (!cursor_.Is(TokenType::kCloseParen))
        cursor_.Fail(cursor_.Here(), "'**' must be applied to the final argument");
      break;
    }
    NodePtr argument;
    if (spread) {
      if (saw_spread) {
        cursor_.Fail(pos, "only one '*' argument unpacking is allowed");
        break;
      }
      saw_spread = true;
      cursor_.Skip();
      argument = MakeNode(NodeKind::kSpread, pos);
      argument->a = expressions_.ParseExpression();
      if (!argument->a) break;
    } else {
      argument = expressions_.ParseExpression();
      if (!argument) break;
      if (cursor_.Is(TokenType::kEquals)) {
        cursor_.Skip();
        if (argument->kind != NodeKind::kIdentifier) {
          cursor_.Fail(argument->pos, mode == ArgsMode::kParameters
                                          ? "expected a parameter name"
                                          : "expected a keyword argument name");
          break;
        }
        NodePtr keyword = MakeNode(NodeKind::kKeywordArgument, argument->pos);
        keyword->text = argument->text;
        keyword->a = expressions_.ParseExpression();
        if (!keyword->a) break;
        argument = std::move(keyword);
      }
      if (mode == ArgsMode::kParameters) {
        if (argument->kind != NodeKind::kIdentifier &&
            argument->kind != NodeKind::kKeywordArgument) {
          cursor_.Fail(argument->pos, "expected a parameter name");
          break;
        }
        if (!names.insert(argument->text).second) {
          cursor_.Fail(argument->pos, "duplicate parameter name '" + argument->text + "'");
          break;
        }
      }
      if (argument->kind == NodeKind::kKeywordArgument) {
        saw_keyword = true;
      } else if (saw_keyword) {
        cursor_.Fail(argument->pos, mode == ArgsMode::kCall
                                        ? "positional arguments must come before keyword arguments"
                                        : "non-default parameter follows a default parameter");
        break;
      } else if (saw_spread) {
        cursor_.Fail(argument->pos, "positional arguments must not follow '*' argument unpacking");
        break;
      }
    }
    args.push_back(std::move(argument));
    if (cursor_.Is(TokenType::kComma)) cursor_.Skip();
  }
  return cursor_.Expect(TokenType::kCloseParen, "')' to close the argument list");
}

NodePtr PrimaryParser::ParseMemberArguments(SourcePos pos) {
  std::vector<NodePtr> parts;
  bool is_slice = false;
  while (!cursor_.failed() && !cursor_.Is(TokenType::kCloseSquareBracket)) {
    if (!cursor_.Peek()) return cursor_.Fail(cursor_.Here(), "expected ']'");
    if (cursor_.Is(TokenType::kColon)) {
      parts.push_back(nullptr);
      cursor_.Skip();
      is_slice = true;
    } else {
      NodePtr part = expressions_.ParseExpression();
      if (!part) return nullptr;
      parts.push_back(std::move(part));
      if (cursor_.Is(TokenType::kColon)) {
        cursor_.Skip();
        is_slice = true;
      }
    }
  }
  if (cursor_.failed()) return nullptr;
  if (parts.empty()) return cursor_.Fail(pos, "expected an index or a slice inside '[]'");
  if (!is_slice) return std::move(parts[0]);
  if (parts.size() > 3) return cursor_.Fail(pos, "a slice takes at most 3 parts");
  NodePtr slice = MakeNode(NodeKind::kSlice, pos);
  parts.resize(3);
  slice->a = std::move(parts[0]);
  slice->b = std::move(parts[1]);
  slice->c = std::move(parts[2]);
  return slice;
}

NodePtr PrimaryParser::ParseMemberExpression(NodePtr object) {
  while (object && (cursor_.Is(TokenType::kDot) || cursor_.Is(TokenType::kOpenSquareBracket))) {
    const Token& op = cursor_.Next();
    const bool computed = op.type == TokenType::kOpenSquareBracket;
    NodePtr property;
    if (computed) {
      property = ParseMemberArguments(op.pos);
      if (!property || !cursor_.Expect(TokenType::kCloseSquareBracket, "']'")) return nullptr;
    } else {
      property = ParsePrimary();
      if (!property) return nullptr;
      if (property->kind != NodeKind::kIdentifier && property->kind != NodeKind::kIntegerLiteral) {
        return cursor_.Fail(property->pos, "expected a name or an integer after '.'");
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

NodePtr PrimaryParser::ParsePrimary() {
  if (cursor_.failed()) return nullptr;
  const Token* token = cursor_.Peek();
  if (!token)
    return cursor_.Fail(cursor_.Here(), "unexpected end of template inside an expression");
  cursor_.Skip();
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
      while (cursor_.Is(TokenType::kStringLiteral)) node->text += cursor_.Next().value;
      node->literal = Value::String(node->text);
      return node;
    }
    case TokenType::kIdentifier: {
      NodePtr node = MakeNode(NodeKind::kIdentifier, token->pos);
      node->text = token->value;
      return node;
    }
    case TokenType::kOpenParen: {
      NodePtr expression = expressions_.ParseExpressionSequence(false);
      if (!expression || !cursor_.Expect(TokenType::kCloseParen, "')'")) return nullptr;
      return expression;
    }
    case TokenType::kOpenSquareBracket: {
      NodePtr node = MakeNode(NodeKind::kArrayLiteral, token->pos);
      while (!cursor_.failed() && !cursor_.Is(TokenType::kCloseSquareBracket)) {
        NodePtr item = expressions_.ParseExpression();
        if (!item) return nullptr;
        node->items.push_back(std::move(item));
        if (cursor_.Is(TokenType::kComma)) cursor_.Skip();
      }
      cursor_.Skip();  // ]
      return cursor_.failed() ? nullptr : std::move(node);
    }
    case TokenType::kOpenCurlyBracket: {
      NodePtr node = MakeNode(NodeKind::kObjectLiteral, token->pos);
      while (!cursor_.failed() && !cursor_.Is(TokenType::kCloseCurlyBracket)) {
        NodePtr key = expressions_.ParseExpression();
        if (!key || !cursor_.Expect(TokenType::kColon, "':' between key and value")) return nullptr;
        NodePtr value = expressions_.ParseExpression();
        if (!value) return nullptr;
        node->items.push_back(std::move(key));
        node->items.push_back(std::move(value));
        if (cursor_.Is(TokenType::kComma)) cursor_.Skip();
      }
      cursor_.Skip();  // }
      return cursor_.failed() ? nullptr : std::move(node);
    }
    default:
      return cursor_.Fail(token->pos, "unexpected " + Describe(*token) + " in an expression");
  }
}

}  // namespace hubwatch::chat_template::parser_internal
