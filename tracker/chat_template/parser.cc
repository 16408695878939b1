#include "tracker/chat_template/parser.h"

#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "tracker/chat_template/statement_parser.h"

namespace hubwatch::chat_template {
namespace parser_internal {
namespace {

// Jinja statements the engine knows but does not implement.
bool IsUnsupportedStatement(std::string_view name) {
  static const std::set<std::string_view> kUnsupported = {
      "include", "extends", "block", "import", "from", "with", "autoescape", "do", "trans"};
  return kUnsupported.count(name) > 0;
}

}  // namespace

NodePtr StatementParser::ParseAny(const std::string& missing) {
  TokenCursor::DepthGuard guard(cursor_);
  if (cursor_.failed()) return nullptr;
  const Token* token = cursor_.Peek();
  if (!token) return cursor_.Fail(cursor_.Here(), "unexpected end of template" + missing);
  switch (token->type) {
    case TokenType::kComment:
      cursor_.Skip();
      return MakeNode(NodeKind::kComment, token->pos);
    case TokenType::kText: {
      NodePtr node = MakeNode(NodeKind::kText, token->pos);
      node->text = token->value;
      cursor_.Skip();
      return node;
    }
    case TokenType::kOpenStatement:
      return ParseStatement();
    case TokenType::kOpenExpression: {
      cursor_.Skip();
      NodePtr expression = expressions_.ParseExpression();
      if (!cursor_.Expect(TokenType::kCloseExpression, "'}}'")) return nullptr;
      return expression;
    }
    default:
      return cursor_.Fail(token->pos, "unexpected " + Describe(*token));
  }
}

NodePtr StatementParser::ParseStatement() {
  const SourcePos open = cursor_.Here();
  cursor_.Skip();  // {%
  const Token* name_token = cursor_.Peek();
  if (!name_token || name_token->type != TokenType::kIdentifier) {
    return cursor_.Fail(open, "expected a statement name after '{%'");
  }
  const std::string name = name_token->value;
  const SourcePos pos = name_token->pos;
  cursor_.Skip();
  const auto where = [&](std::string_view tag) {
    return ": missing {% " + std::string(tag) + " %} for the " + name + " statement at line " +
           std::to_string(pos.line);
  };
  NodePtr result;
  if (name == "set") {
    result = ParseSet(pos);
  } else if (name == "if") {
    result = ParseIf(pos);
    if (!cursor_.ExpectEnd("endif")) return cursor_.Fail(pos, "if statement" + where("endif"));
  } else if (name == "macro") {
    result = ParseMacro(pos);
    if (!cursor_.ExpectEnd("endmacro")) return nullptr;
  } else if (name == "for") {
    result = ParseFor(pos);
    if (!cursor_.ExpectEnd("endfor")) return nullptr;
  } else if (name == "call") {
    result = ParseCallBlock(pos);
  } else if (name == "break" || name == "continue") {
    if (!cursor_.Expect(TokenType::kCloseStatement, "'%}'")) return nullptr;
    result = MakeNode(name == "break" ? NodeKind::kBreak : NodeKind::kContinue, pos);
  } else if (name == "filter") {
    result = ParseFilterBlock(pos);
  } else if (name == "raw") {  // not in the reference, see DIVERGENCES in template.h
    if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' after raw")) return nullptr;
    result = MakeNode(NodeKind::kText, pos);
    if (cursor_.Is(TokenType::kText)) result->text = cursor_.Next().value;
    if (!cursor_.ExpectEnd("endraw")) return cursor_.Fail(pos, "raw block: missing {% endraw %}");
  } else if (IsUnsupportedStatement(name)) {
    return cursor_.Fail(ErrorCode::kUnsupported, pos, "unsupported statement '" + name + "'");
  } else {
    return cursor_.Fail(pos, "unknown statement '" + name + "'");
  }
  return cursor_.failed() ? nullptr : std::move(result);
}

NodePtr StatementParser::ParseSet(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kSet, pos);
  node->a = expressions_.ParseExpressionSequence(false);
  if (cursor_.failed()) return nullptr;
  if (cursor_.Is(TokenType::kEquals)) {
    cursor_.Skip();
    node->b = expressions_.ParseExpressionSequence(false);
  } else {
    if (!cursor_.Expect(TokenType::kCloseStatement, "'=' or '%}' in the set statement"))
      return nullptr;
    if (!ParseBlock({"endset"}, node->body, ": missing {% endset %}")) return nullptr;
    cursor_.Skip();  // {%
    if (!cursor_.ExpectIdentifier("endset")) return nullptr;
  }
  if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' to close the set statement"))
    return nullptr;
  return node;
}

NodePtr StatementParser::ParseIf(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kIf, pos);
  node->a = expressions_.ParseExpression();
  if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' after the if condition")) return nullptr;
  const std::string missing =
      ": missing {% endif %} for the if statement at line " + std::to_string(pos.line);
  if (!ParseBlock({"elif", "else", "endif"}, node->body, missing)) return nullptr;
  if (cursor_.IsStatement({"elif"})) {
    const SourcePos elif_pos = cursor_.Peek(1)->pos;
    cursor_.Skip(2);
    NodePtr nested = ParseIf(elif_pos);
    if (!nested) return nullptr;
    node->alternate.push_back(std::move(nested));
  } else if (cursor_.IsStatement({"else"})) {
    cursor_.Skip(2);
    if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' after else")) return nullptr;
    if (!ParseBlock({"endif"}, node->alternate, missing)) return nullptr;
  }
  return node;
}

NodePtr StatementParser::ParseMacro(SourcePos pos) {
  NodePtr name = primaries_.ParsePrimary();
  if (!name) return nullptr;
  if (name->kind != NodeKind::kIdentifier) return cursor_.Fail(name->pos, "expected a macro name");
  NodePtr node = MakeNode(NodeKind::kMacro, pos);
  node->text = name->text;
  if (!primaries_.ParseArgs(ArgsMode::kParameters, node->items)) return nullptr;
  if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' after the macro parameters"))
    return nullptr;
  ParseBlock({"endmacro"}, node->body,
             ": missing {% endmacro %} for macro '" + node->text + "' at line " +
                 std::to_string(pos.line));
  return cursor_.failed() ? nullptr : std::move(node);
}

NodePtr StatementParser::ParseFor(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kFor, pos);
  node->a = expressions_.ParseExpressionSequence(true);
  if (cursor_.failed()) return nullptr;
  if (node->a->kind != NodeKind::kIdentifier && node->a->kind != NodeKind::kTupleLiteral) {
    return cursor_.Fail(node->a->pos,
                        "expected a name or a tuple of names as the for loop variable");
  }
  if (!cursor_.IsIdentifier("in"))
    return cursor_.Fail(cursor_.Here(), "expected 'in' after the for loop variable");
  cursor_.Skip();
  node->b = expressions_.ParseExpression();
  if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' after the for loop header")) return nullptr;
  const std::string missing =
      ": missing {% endfor %} for the for loop at line " + std::to_string(pos.line);
  if (!ParseBlock({"endfor", "else"}, node->body, missing)) return nullptr;
  if (cursor_.IsStatement({"else"})) {
    cursor_.Skip(2);
    if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' after else")) return nullptr;
    if (!ParseBlock({"endfor"}, node->alternate, missing)) return nullptr;
  }
  return node;
}

NodePtr StatementParser::ParseCallBlock(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kCallBlock, pos);
  if (cursor_.Is(TokenType::kOpenParen)) {
    node->flag = true;
    if (!primaries_.ParseArgs(ArgsMode::kParameters, node->items)) return nullptr;
  }
  NodePtr callee = primaries_.ParsePrimary();
  if (!callee) return nullptr;
  if (callee->kind != NodeKind::kIdentifier) {
    return cursor_.Fail(callee->pos, "expected a macro name after 'call'");
  }
  NodePtr call = MakeNode(NodeKind::kCall, callee->pos);
  call->a = std::move(callee);
  if (!primaries_.ParseArgs(ArgsMode::kCall, call->items)) return nullptr;
  node->a = std::move(call);
  if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' after the call")) return nullptr;
  if (!ParseBlock({"endcall"}, node->body, ": missing {% endcall %}")) return nullptr;
  if (!cursor_.ExpectEnd("endcall")) return nullptr;
  return node;
}

NodePtr StatementParser::ParseFilterBlock(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kFilterBlock, pos);
  NodePtr filter = primaries_.ParsePrimary();
  if (!filter) return nullptr;
  if (filter->kind != NodeKind::kIdentifier)
    return cursor_.Fail(filter->pos, "expected a filter name");
  if (cursor_.Is(TokenType::kOpenParen)) filter = primaries_.ParseCallExpression(std::move(filter));
  node->a = std::move(filter);
  if (!cursor_.Expect(TokenType::kCloseStatement, "'%}' after the filter")) return nullptr;
  if (!ParseBlock({"endfilter"}, node->body, ": missing {% endfilter %}")) return nullptr;
  if (!cursor_.ExpectEnd("endfilter")) return nullptr;
  return cursor_.failed() ? nullptr : std::move(node);
}

}  // namespace parser_internal

Result<std::vector<NodePtr>> Parse(const std::vector<Token>& tokens, int max_nesting) {
  parser_internal::StatementParser parser(tokens, max_nesting);
  return parser.Run();
}

}  // namespace hubwatch::chat_template
