#pragma once

// The parser's position in the token stream, its sticky first error and its nesting depth,
// shared by the statement, expression and primary parsers of one parse.
//
// Ownership: borrows the tokens, which must outlive it; the StatementParser owns the cursor and
// the parsers it uses borrow it. Not thread-safe: one cursor per parse.

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/lexer.h"

namespace hubwatch::chat_template::parser_internal {

// How an error message names a token.
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

class TokenCursor {
 public:
  TokenCursor(const std::vector<Token>& tokens, int max_nesting)
      : t_(tokens), max_depth_(max_nesting) {}
  TokenCursor(const TokenCursor&) = delete;
  TokenCursor& operator=(const TokenCursor&) = delete;

  // Counts nesting on the C++ stack so hostile input cannot overflow it.
  class DepthGuard {
   public:
    explicit DepthGuard(TokenCursor& c) : c_(c) {
      if (++c_.depth_ > c_.max_depth_ && !c_.failed()) {
        c_.Fail(ErrorCode::kOverflow, c_.Here(),
                "template nesting exceeds " + std::to_string(c_.max_depth_) + " levels");
      }
    }
    ~DepthGuard() { --c_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    TokenCursor& c_;
  };

  bool failed() const { return error_.has_value(); }
  // REQUIRES: failed()
  const Error& error() const { return *error_; }
  // Records the first error; returns null so callers can `return Fail(...)`.
  NodePtr Fail(ErrorCode code, SourcePos pos, std::string message) {
    if (!error_) {
      error_ = Error{code, "line " + std::to_string(pos.line) + ", column " +
                               std::to_string(pos.column) + ": " + message};
    }
    return nullptr;
  }
  NodePtr Fail(SourcePos pos, std::string message) {
    return Fail(ErrorCode::kInvalidInput, pos, std::move(message));
  }

  bool AtEnd() const { return cur_ >= t_.size(); }
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
  // A `{% name` with one of `names`.
  bool IsStatement(std::initializer_list<std::string_view> names) const {
    if (!Is(TokenType::kOpenStatement) || !Is(TokenType::kIdentifier, 1)) return false;
    for (std::string_view name : names) {
      if (Peek(1)->value == name) return true;
    }
    return false;
  }

  // Consumes the current token. REQUIRES: !AtEnd()
  const Token& Next() { return t_[cur_++]; }
  // Moves past n tokens.
  void Skip(size_t n = 1) { cur_ += n; }
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
  // Consumes `{% name %}`.
  bool ExpectEnd(std::string_view name) {
    return Expect(TokenType::kOpenStatement, "'{%'") && ExpectIdentifier(name) &&
           Expect(TokenType::kCloseStatement, "'%}'");
  }

 private:
  const std::vector<Token>& t_;
  size_t cur_ = 0;
  int depth_ = 0;
  const int max_depth_;
  std::optional<Error> error_;
};

}  // namespace hubwatch::chat_template::parser_internal
