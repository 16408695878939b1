#pragma once

// Internal to the parser (parser.cc: statements, parser_expressions.cc: expressions); not part
// of the engine's interface.

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracker/chat_template/parser.h"

namespace hubwatch::chat_template::parser_internal {

inline std::string Describe(const Token& token) {
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

inline std::string At(SourcePos pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": ";
}

// Jinja statements the engine knows but does not implement.
inline bool IsUnsupportedStatement(std::string_view name) {
  static const std::set<std::string_view> kUnsupported = {
      "include", "extends", "block", "import", "from", "with", "autoescape", "do", "trans"};
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

  // One left-associative binary precedence level: operand (op operand)*.
  template <class Matches>
  NodePtr ParseBinaryLevel(NodePtr (Parser::*operand)(), Matches matches) {
    NodePtr left = (this->*operand)();
    while (left && matches()) {
      const Token& op = t_[cur_++];
      left = Binary(op, std::move(left), (this->*operand)());
    }
    return left;
  }

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

}  // namespace hubwatch::chat_template::parser_internal
