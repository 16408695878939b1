#include "tracker/chat_template/parser.h"

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "tracker/chat_template/js_number.h"

namespace hubwatch::chat_template {
namespace {

std::string Describe(const Token& token) {
  switch (token.type) {
    case TokenType::kText:
      return "text";
    case TokenType::kIdentifier:
      return "'" + token.value + "'";
    case TokenType::kStringLiteral:
      return "a string";
    case TokenType::kNumericLiteral:
      return "the number " + token.value;
    case TokenType::kComment:
      return "a comment";
    default:
      return "'" + token.value + "'";
  }
}

std::string At(SourcePos pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": ";
}

// Jinja statements the engine knows but does not implement.
bool IsUnsupportedStatement(std::string_view name) {
  static const std::set<std::string_view> kUnsupported = {
      "raw", "include", "extends", "block", "import", "from", "with", "autoescape", "do", "trans"};
  return kUnsupported.count(name) > 0;
}

enum class ArgsMode { kCall, kParameters };

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, int max_nesting) : t_(tokens), max_depth_(max_nesting) {}

  Result<std::vector<NodePtr>> Run() {
    std::vector<NodePtr> program;
    while (cur_ < t_.size() && !failed()) {
      NodePtr node = ParseAny("");
      if (node) program.push_back(std::move(node));
    }
    if (failed()) return *error_;
    return program;
  }

 private:
  // Counts nesting on the C++ stack so hostile input cannot overflow it.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > p_.max_depth_ && !p_.failed()) {
        p_.Fail(ErrorCode::kOverflow, p_.Here(),
                "template nesting exceeds " + std::to_string(p_.max_depth_) + " levels");
      }
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  bool failed() const { return error_.has_value(); }
  NodePtr Fail(ErrorCode code, SourcePos pos, std::string message) {
    if (!error_) error_ = Error{code, At(pos) + message};
    return nullptr;
  }
  NodePtr Fail(SourcePos pos, std::string message) {
    return Fail(ErrorCode::kInvalidInput, pos, std::move(message));
  }
  const Token* Peek(size_t ahead = 0) const {
    return cur_ + ahead < t_.size() ? &t_[cur_ + ahead] : nullptr;
  }
  SourcePos Here() const {
    if (const Token* token = Peek()) return token->pos;
    return t_.empty() ? SourcePos{1, 1} : t_.back().pos;
  }
  bool Is(TokenType type, size_t ahead = 0) const {
    const Token* token = Peek(ahead);
    return token && token->type == type;
  }
  bool IsIdentifier(std::string_view name, size_t ahead = 0) const {
    const Token* token = Peek(ahead);
    return token && token->type == TokenType::kIdentifier && token->value == name;
  }
  bool IsStatement(std::initializer_list<std::string_view> names) const {
    if (!Is(TokenType::kOpenStatement) || !Is(TokenType::kIdentifier, 1)) return false;
    for (std::string_view name : names) {
      if (Peek(1)->value == name) return true;
    }
    return false;
  }
  // Consumes a token of the given type, or fails with "expected <what>".
  bool Expect(TokenType type, std::string_view what) {
    if (failed()) return false;
    if (Is(type)) {
      ++cur_;
      return true;
    }
    const Token* token = Peek();
    Fail(Here(), "expected " + std::string(what) + ", got " +
                     (token ? Describe(*token) : std::string("the end of the template")));
    return false;
  }
  bool ExpectIdentifier(std::string_view name) {
    if (failed()) return false;
    if (IsIdentifier(name)) {
      ++cur_;
      return true;
    }
    Fail(Here(), "expected '" + std::string(name) + "'");
    return false;
  }
  bool ExpectEnd(std::string_view name) {
    return Expect(TokenType::kOpenStatement, "'{%'") && ExpectIdentifier(name) &&
           Expect(TokenType::kCloseStatement, "'%}'");
  }

  // Parses statements until one of `names` opens; `missing` describes the awaited tag.
  bool ParseBlock(std::initializer_list<std::string_view> names, std::vector<NodePtr>& body,
                  const std::string& missing) {
    while (!failed() && !IsStatement(names)) {
      NodePtr node = ParseAny(missing);
      if (node) body.push_back(std::move(node));
    }
    return !failed();
  }

  NodePtr ParseAny(const std::string& missing);
  NodePtr ParseStatement();
  NodePtr ParseSet(SourcePos pos);
  NodePtr ParseIf(SourcePos pos);
  NodePtr ParseMacro(SourcePos pos);
  NodePtr ParseFor(SourcePos pos);
  NodePtr ParseCallBlock(SourcePos pos);
  NodePtr ParseFilterBlock(SourcePos pos);
  NodePtr ParseExpressionSequence(bool primary);
  NodePtr ParseExpression();
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
  NodePtr ParseCallMember();
  NodePtr ParseCallExpression(NodePtr callee);
  bool ParseArgs(ArgsMode mode, std::vector<NodePtr>& args);
  NodePtr ParseMemberArguments(SourcePos pos);
  NodePtr ParseMemberExpression(NodePtr object);
  NodePtr ParsePrimary();

  NodePtr Binary(const Token& op, NodePtr lhs, NodePtr rhs) {
    if (!lhs || !rhs) return nullptr;
    NodePtr node = MakeNode(NodeKind::kBinary, op.pos);
    node->text = op.value;
    node->a = std::move(lhs);
    node->b = std::move(rhs);
    return node;
  }

  const std::vector<Token>& t_;
  size_t cur_ = 0;
  int depth_ = 0;
  const int max_depth_;
  std::optional<Error> error_;
};

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
  NodePtr left = ParseLogicalAnd();
  while (left && IsIdentifier("or")) {
    const Token& op = t_[cur_++];
    left = Binary(op, std::move(left), ParseLogicalAnd());
  }
  return left;
}

NodePtr Parser::ParseLogicalAnd() {
  NodePtr left = ParseLogicalNot();
  while (left && IsIdentifier("and")) {
    const Token& op = t_[cur_++];
    left = Binary(op, std::move(left), ParseLogicalNot());
  }
  return left;
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
  NodePtr left = ParseMultiplicative();
  while (left && Is(TokenType::kAdditiveBinaryOperator)) {
    const Token& op = t_[cur_++];
    left = Binary(op, std::move(left), ParseMultiplicative());
  }
  return left;
}

NodePtr Parser::ParseMultiplicative() {
  NodePtr left = ParsePower();
  while (left && Is(TokenType::kMultiplicativeBinaryOperator)) {
    const Token& op = t_[cur_++];
    left = Binary(op, std::move(left), ParsePower());
  }
  return left;
}

NodePtr Parser::ParsePower() {
  NodePtr left = ParseTest();
  while (left && Is(TokenType::kExponentiationBinaryOperator)) {
    const Token& op = t_[cur_++];
    left = Binary(op, std::move(left), ParseTest());
  }
  return left;
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

}  // namespace

Result<std::vector<NodePtr>> Parse(const std::vector<Token>& tokens, int max_nesting) {
  Parser parser(tokens, max_nesting);
  return parser.Run();
}

}  // namespace hubwatch::chat_template
