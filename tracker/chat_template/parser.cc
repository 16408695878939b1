#include "tracker/chat_template/parser.h"

#include <string>
#include <utility>

#include "tracker/chat_template/parser_internal.h"

namespace hubwatch::chat_template {
namespace parser_internal {

NodePtr Parser::ParseAny(const std::string& missing) {
  DepthGuard guard(*this);
  if (failed()) return nullptr;
  const Token* token = Peek();
  if (!token) return Fail(Here(), "unexpected end of template" + missing);
  switch (token->type) {
    case TokenType::kComment:
      ++cur_;
      return MakeNode(NodeKind::kComment, token->pos);
    case TokenType::kText: {
      NodePtr node = MakeNode(NodeKind::kText, token->pos);
      node->text = token->value;
      ++cur_;
      return node;
    }
    case TokenType::kOpenStatement:
      return ParseStatement();
    case TokenType::kOpenExpression: {
      ++cur_;
      NodePtr expression = ParseExpression();
      if (!Expect(TokenType::kCloseExpression, "'}}'")) return nullptr;
      return expression;
    }
    default:
      return Fail(token->pos, "unexpected " + Describe(*token));
  }
}

NodePtr Parser::ParseStatement() {
  const SourcePos open = Here();
  ++cur_;  // {%
  const Token* name_token = Peek();
  if (!name_token || name_token->type != TokenType::kIdentifier) {
    return Fail(open, "expected a statement name after '{%'");
  }
  const std::string name = name_token->value;
  const SourcePos pos = name_token->pos;
  ++cur_;
  const auto where = [&](std::string_view tag) {
    return ": missing {% " + std::string(tag) + " %} for the " + name + " statement at line " +
           std::to_string(pos.line);
  };
  NodePtr result;
  if (name == "set") {
    result = ParseSet(pos);
  } else if (name == "if") {
    result = ParseIf(pos);
    if (!ExpectEnd("endif")) return Fail(pos, "if statement" + where("endif"));
  } else if (name == "macro") {
    result = ParseMacro(pos);
    if (!ExpectEnd("endmacro")) return nullptr;
  } else if (name == "for") {
    result = ParseFor(pos);
    if (!ExpectEnd("endfor")) return nullptr;
  } else if (name == "call") {
    result = ParseCallBlock(pos);
  } else if (name == "break" || name == "continue") {
    if (!Expect(TokenType::kCloseStatement, "'%}'")) return nullptr;
    result = MakeNode(name == "break" ? NodeKind::kBreak : NodeKind::kContinue, pos);
  } else if (name == "filter") {
    result = ParseFilterBlock(pos);
  } else if (name == "raw") {  // not in the reference, see DIVERGENCES in template.h
    if (!Expect(TokenType::kCloseStatement, "'%}' after raw")) return nullptr;
    result = MakeNode(NodeKind::kText, pos);
    if (Is(TokenType::kText)) result->text = t_[cur_++].value;
    if (!ExpectEnd("endraw")) return Fail(pos, "raw block: missing {% endraw %}");
  } else if (IsUnsupportedStatement(name)) {
    return Fail(ErrorCode::kUnsupported, pos, "unsupported statement '" + name + "'");
  } else {
    return Fail(pos, "unknown statement '" + name + "'");
  }
  return failed() ? nullptr : std::move(result);
}

NodePtr Parser::ParseSet(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kSet, pos);
  node->a = ParseExpressionSequence(false);
  if (failed()) return nullptr;
  if (Is(TokenType::kEquals)) {
    ++cur_;
    node->b = ParseExpressionSequence(false);
  } else {
    if (!Expect(TokenType::kCloseStatement, "'=' or '%}' in the set statement")) return nullptr;
    if (!ParseBlock({"endset"}, node->body, ": missing {% endset %}")) return nullptr;
    ++cur_;  // {%
    if (!ExpectIdentifier("endset")) return nullptr;
  }
  if (!Expect(TokenType::kCloseStatement, "'%}' to close the set statement")) return nullptr;
  return node;
}

NodePtr Parser::ParseIf(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kIf, pos);
  node->a = ParseExpression();
  if (!Expect(TokenType::kCloseStatement, "'%}' after the if condition")) return nullptr;
  const std::string missing =
      ": missing {% endif %} for the if statement at line " + std::to_string(pos.line);
  if (!ParseBlock({"elif", "else", "endif"}, node->body, missing)) return nullptr;
  if (IsStatement({"elif"})) {
    const SourcePos elif_pos = Peek(1)->pos;
    cur_ += 2;
    NodePtr nested = ParseIf(elif_pos);
    if (!nested) return nullptr;
    node->alternate.push_back(std::move(nested));
  } else if (IsStatement({"else"})) {
    cur_ += 2;
    if (!Expect(TokenType::kCloseStatement, "'%}' after else")) return nullptr;
    if (!ParseBlock({"endif"}, node->alternate, missing)) return nullptr;
  }
  return node;
}

NodePtr Parser::ParseMacro(SourcePos pos) {
  NodePtr name = ParsePrimary();
  if (!name) return nullptr;
  if (name->kind != NodeKind::kIdentifier) return Fail(name->pos, "expected a macro name");
  NodePtr node = MakeNode(NodeKind::kMacro, pos);
  node->text = name->text;
  if (!ParseArgs(ArgsMode::kParameters, node->items)) return nullptr;
  if (!Expect(TokenType::kCloseStatement, "'%}' after the macro parameters")) return nullptr;
  ParseBlock({"endmacro"}, node->body,
             ": missing {% endmacro %} for macro '" + node->text + "' at line " +
                 std::to_string(pos.line));
  return failed() ? nullptr : std::move(node);
}

NodePtr Parser::ParseFor(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kFor, pos);
  node->a = ParseExpressionSequence(true);
  if (failed()) return nullptr;
  if (node->a->kind != NodeKind::kIdentifier && node->a->kind != NodeKind::kTupleLiteral) {
    return Fail(node->a->pos, "expected a name or a tuple of names as the for loop variable");
  }
  if (!IsIdentifier("in")) return Fail(Here(), "expected 'in' after the for loop variable");
  ++cur_;
  node->b = ParseExpression();
  if (!Expect(TokenType::kCloseStatement, "'%}' after the for loop header")) return nullptr;
  const std::string missing =
      ": missing {% endfor %} for the for loop at line " + std::to_string(pos.line);
  if (!ParseBlock({"endfor", "else"}, node->body, missing)) return nullptr;
  if (IsStatement({"else"})) {
    cur_ += 2;
    if (!Expect(TokenType::kCloseStatement, "'%}' after else")) return nullptr;
    if (!ParseBlock({"endfor"}, node->alternate, missing)) return nullptr;
  }
  return node;
}

NodePtr Parser::ParseCallBlock(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kCallBlock, pos);
  if (Is(TokenType::kOpenParen)) {
    node->flag = true;
    if (!ParseArgs(ArgsMode::kParameters, node->items)) return nullptr;
  }
  NodePtr callee = ParsePrimary();
  if (!callee) return nullptr;
  if (callee->kind != NodeKind::kIdentifier) {
    return Fail(callee->pos, "expected a macro name after 'call'");
  }
  NodePtr call = MakeNode(NodeKind::kCall, callee->pos);
  call->a = std::move(callee);
  if (!ParseArgs(ArgsMode::kCall, call->items)) return nullptr;
  node->a = std::move(call);
  if (!Expect(TokenType::kCloseStatement, "'%}' after the call")) return nullptr;
  if (!ParseBlock({"endcall"}, node->body, ": missing {% endcall %}")) return nullptr;
  if (!ExpectEnd("endcall")) return nullptr;
  return node;
}

NodePtr Parser::ParseFilterBlock(SourcePos pos) {
  NodePtr node = MakeNode(NodeKind::kFilterBlock, pos);
  NodePtr filter = ParsePrimary();
  if (!filter) return nullptr;
  if (filter->kind != NodeKind::kIdentifier) return Fail(filter->pos, "expected a filter name");
  if (Is(TokenType::kOpenParen)) filter = ParseCallExpression(std::move(filter));
  node->a = std::move(filter);
  if (!Expect(TokenType::kCloseStatement, "'%}' after the filter")) return nullptr;
  if (!ParseBlock({"endfilter"}, node->body, ": missing {% endfilter %}")) return nullptr;
  if (!ExpectEnd("endfilter")) return nullptr;
  return failed() ? nullptr : std::move(node);
}

}  // namespace parser_internal

Result<std::vector<NodePtr>> Parse(const std::vector<Token>& tokens, int max_nesting) {
  parser_internal::Parser parser(tokens, max_nesting);
  return parser.Run();
}

}  // namespace hubwatch::chat_template
