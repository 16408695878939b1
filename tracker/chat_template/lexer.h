#pragma once

// Lexer: template source -> tokens, as @huggingface/jinja tokenizes with the options
// transformers uses (trim_blocks and lstrip_blocks on):
//  - one trailing newline of the template is dropped;
//  - lstrip_blocks: spaces and tabs before {% / {# at the start of a line are dropped;
//  - trim_blocks: the newline right after %} / #} / -} is dropped;
//  - {% generation %} / {% endgeneration %} (transformers' assistant-mask tags) are removed;
//  - {%- -%} {{- -}} {#- -#} strip the whitespace around them.
// Every token remembers where it starts in the original source, for error messages.
//
// Pure; thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

enum class TokenType {
  kText,
  kNumericLiteral,
  kStringLiteral,  // value holds the unescaped contents
  kIdentifier,
  kEquals,
  kOpenParen,
  kCloseParen,
  kOpenStatement,
  kCloseStatement,
  kOpenExpression,
  kCloseExpression,
  kOpenSquareBracket,
  kCloseSquareBracket,
  kOpenCurlyBracket,
  kCloseCurlyBracket,
  kComma,
  kDot,
  kColon,
  kPipe,
  kAdditiveBinaryOperator,        // + - ~
  kMultiplicativeBinaryOperator,  // * / // %
  kExponentiationBinaryOperator,  // **
  kComparisonBinaryOperator,      // < > <= >= == !=
  kUnaryOperator,                 // + - in prefix position
  kComment,
};

struct Token {
  TokenType type;
  std::string value;
  SourcePos pos;
};

// Maps offsets in the source to 1-based line and column (columns count code points). Queries
// in increasing offset order cost O(1) amortized. Not thread-safe (caches the last query).
class SourceMap {
 public:
  explicit SourceMap(std::string_view source);
  SourcePos At(size_t offset);

 private:
  std::string_view source_;
  std::vector<size_t> line_starts_;
  size_t last_offset_ = 0;
  SourcePos last_{1, 1};
};

// Tokenizes source. Errors (an unterminated string or comment, an unexpected character) are
// kInvalidInput with the line and column.
Result<std::vector<Token>> Tokenize(std::string_view source);

}  // namespace hubwatch::chat_template
