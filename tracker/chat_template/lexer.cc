#include "tracker/chat_template/lexer.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "tracker/chat_template/lexer_preprocess.h"
#include "tracker/chat_template/string_literal.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {

SourceMap::SourceMap(std::string_view source) : source_(source) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') line_starts_.push_back(i + 1);
  }
}

SourcePos SourceMap::At(size_t offset) {
  offset = std::min(offset, source_.size());
  const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const size_t line_index = static_cast<size_t>(it - line_starts_.begin()) - 1;
  const size_t line_start = line_starts_[line_index];
  // Continue from the previous query when it is on the same line, before this offset.
  size_t from = line_start;
  int column = 1;
  if (last_.line == static_cast<int>(line_index) + 1 && last_offset_ >= line_start &&
      last_offset_ <= offset) {
    from = last_offset_;
    column = last_.column;
  }
  for (size_t i = from; i < offset;) {
    text::DecodeUtf8(source_, i);
    ++column;
  }
  last_offset_ = offset;
  last_ = {static_cast<int>(line_index) + 1, column};
  return last_;
}

namespace {

using lexer_internal::DecodeStringLiteral;
using lexer_internal::Mapped;
using lexer_internal::Preprocess;
using lexer_internal::WhitespaceAt;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Where the `{% endraw %}` (or `{%- endraw`) at or after `from` starts; s.size() when none.
size_t FindEndRaw(const std::string& s, size_t from) {
  for (size_t i = s.find("{%", from); i != std::string::npos; i = s.find("{%", i + 1)) {
    size_t j = i + 2;
    if (j < s.size() && s[j] == '-') ++j;
    while (j < s.size() && WhitespaceAt(s, j) > 0) j += WhitespaceAt(s, j);
    if (s.compare(j, 6, "endraw") == 0) return i;
  }
  return s.size();
}

struct Rule {
  std::string_view seq;
  TokenType type;
};

// Ordered as the reference's mapping table (longest first where prefixes overlap).
constexpr Rule kRules[] = {
    {"{%", TokenType::kOpenStatement},
    {"%}", TokenType::kCloseStatement},
    {"{{", TokenType::kOpenExpression},
    {"}}", TokenType::kCloseExpression},
    {"(", TokenType::kOpenParen},
    {")", TokenType::kCloseParen},
    {"{", TokenType::kOpenCurlyBracket},
    {"}", TokenType::kCloseCurlyBracket},
    {"[", TokenType::kOpenSquareBracket},
    {"]", TokenType::kCloseSquareBracket},
    {",", TokenType::kComma},
    {".", TokenType::kDot},
    {":", TokenType::kColon},
    {"|", TokenType::kPipe},
    {"<=", TokenType::kComparisonBinaryOperator},
    {">=", TokenType::kComparisonBinaryOperator},
    {"==", TokenType::kComparisonBinaryOperator},
    {"!=", TokenType::kComparisonBinaryOperator},
    {"<", TokenType::kComparisonBinaryOperator},
    {">", TokenType::kComparisonBinaryOperator},
    {"+", TokenType::kAdditiveBinaryOperator},
    {"-", TokenType::kAdditiveBinaryOperator},
    {"~", TokenType::kAdditiveBinaryOperator},
    {"**", TokenType::kExponentiationBinaryOperator},
    {"*", TokenType::kMultiplicativeBinaryOperator},
    {"//", TokenType::kMultiplicativeBinaryOperator},
    {"/", TokenType::kMultiplicativeBinaryOperator},
    {"%", TokenType::kMultiplicativeBinaryOperator},
    {"=", TokenType::kEquals},
};

class Lexer {
 public:
  Lexer(std::string_view original, Mapped src)
      : map_(original), src_(std::move(src)), s_(src_.text) {}

  Result<std::vector<Token>> Run();

 private:
  Error Fail(size_t at, std::string message) {
    const SourcePos pos = PosAt(at);
    return Error::InvalidInput("line " + std::to_string(pos.line) + ", column " +
                               std::to_string(pos.column) + ": " + message);
  }
  SourcePos PosAt(size_t at) {
    if (src_.origin.empty()) return {1, 1};
    return map_.At(at < src_.origin.size() ? src_.origin[at] : src_.origin.back() + 1);
  }
  void Push(TokenType type, std::string value, size_t at) {
    tokens_.push_back({type, std::move(value), PosAt(at)});
  }
  bool LastIs(TokenType t) const { return !tokens_.empty() && tokens_.back().type == t; }

  // Advances past code points satisfying pred; fails when the input ends while it holds.
  template <class Pred>
  bool ConsumeWhile(Pred pred, std::string& out) {
    const size_t start = pos_;
    while (pos_ < s_.size()) {
      size_t next = pos_;
      const char32_t cp = text::DecodeUtf8(s_, next);
      if (!pred(cp)) break;
      pos_ = next;
      if (pos_ >= s_.size()) return false;
    }
    out.assign(s_, start, pos_ - start);
    return true;
  }
  void StripTrailingWhitespace() {
    if (!LastIs(TokenType::kText)) return;
    std::string& text = tokens_.back().value;
    text.resize(text::TrimEnd(text).size());
    if (text.empty()) tokens_.pop_back();
  }
  // After `{% raw %}`: the text up to the next {% endraw %} is one text token, not template
  // syntax. (Not in the reference, see DIVERGENCES in template.h.)
  void LexRawBody() {
    const size_t k = tokens_.size();
    if (k < 3 || tokens_[k - 3].type != TokenType::kOpenStatement ||
        tokens_[k - 2].type != TokenType::kIdentifier || tokens_[k - 2].value != "raw") {
      return;
    }
    const size_t end = FindEndRaw(s_, pos_);
    if (end > pos_) Push(TokenType::kText, s_.substr(pos_, end - pos_), pos_);
    pos_ = end;
  }
  void SkipLeadingWhitespace() {
    while (pos_ < s_.size() && WhitespaceAt(s_, pos_) > 0) pos_ += WhitespaceAt(s_, pos_);
  }

  SourceMap map_;
  Mapped src_;
  const std::string& s_;
  size_t pos_ = 0;
  int curly_depth_ = 0;
  std::vector<Token> tokens_;
};

Result<std::vector<Token>> Lexer::Run() {
  const auto is_digit = [](char32_t c) { return c >= '0' && c <= '9'; };
  const auto is_word = [](char32_t c) {
    return c < 0x80 && text::IsAsciiWord(static_cast<unsigned char>(c));
  };
  const auto is_space = [](char32_t c) { return text::IsJsWhitespace(c); };
  const size_t n = s_.size();
  while (pos_ < n) {
    const bool at_text = tokens_.empty() || LastIs(TokenType::kCloseStatement) ||
                         LastIs(TokenType::kCloseExpression) || LastIs(TokenType::kComment);
    if (at_text) {
      size_t end = pos_;
      while (true) {
        end = s_.find('{', end);
        if (end == std::string::npos) {
          end = n;
          break;
        }
        const char next = end + 1 < n ? s_[end + 1] : '\0';
        if (next == '%' || next == '{' || next == '#') break;
        ++end;
      }
      if (end > pos_) {
        Push(TokenType::kText, s_.substr(pos_, end - pos_), pos_);
        pos_ = end;
        continue;
      }
    }
    if (s_[pos_] == '{') {
      const char next = pos_ + 1 < n ? s_[pos_ + 1] : '\0';
      if (next == '#') {
        const size_t start = pos_;
        pos_ += 2;
        const bool strip_before = pos_ < n && s_[pos_] == '-';
        if (strip_before) ++pos_;
        const size_t end = s_.find("#}", pos_);
        if (end == std::string::npos) return Fail(start, "Missing end of comment tag");
        std::string comment = s_.substr(pos_, end - pos_);
        const bool strip_after = !comment.empty() && comment.back() == '-';
        if (strip_after) comment.pop_back();
        if (strip_before) StripTrailingWhitespace();
        Push(TokenType::kComment, std::move(comment), start);
        pos_ = end + 2;
        if (strip_after) SkipLeadingWhitespace();
        continue;
      }
      if (pos_ + 2 < n && s_[pos_ + 2] == '-' && (next == '%' || next == '{')) {
        StripTrailingWhitespace();
        if (next == '%') {
          Push(TokenType::kOpenStatement, "{%", pos_);
        } else {
          Push(TokenType::kOpenExpression, "{{", pos_);
          curly_depth_ = 0;
        }
        pos_ += 3;
        continue;
      }
    }
    std::string scratch;
    if (!ConsumeWhile(is_space, scratch)) return Fail(pos_, "Unexpected end of input");
    const char c = s_[pos_];
    if (c == '-' && pos_ + 2 < n && s_[pos_ + 2] == '}' &&
        (s_[pos_ + 1] == '%' || s_[pos_ + 1] == '}')) {
      const bool statement = s_[pos_ + 1] == '%';
      Push(statement ? TokenType::kCloseStatement : TokenType::kCloseExpression,
           statement ? "%}" : "}}", pos_);
      pos_ += 3;
      SkipLeadingWhitespace();
      if (statement) LexRawBody();
      continue;
    }
    if (c == '-' || c == '+') {
      if (tokens_.empty() || LastIs(TokenType::kText)) {
        return Fail(pos_, std::string("Unexpected character: ") + c);
      }
      const TokenType last = tokens_.back().type;
      const bool binary = last == TokenType::kIdentifier || last == TokenType::kNumericLiteral ||
                          last == TokenType::kStringLiteral || last == TokenType::kCloseParen ||
                          last == TokenType::kCloseSquareBracket;
      if (!binary) {
        const size_t start = pos_++;
        std::string num;
        if (!ConsumeWhile(is_digit, num)) return Fail(pos_, "Unexpected end of input");
        if (!num.empty() && pos_ + 1 < n && s_[pos_] == '.' && IsDigit(s_[pos_ + 1])) {
          ++pos_;
          std::string frac;
          if (!ConsumeWhile(is_digit, frac)) return Fail(pos_, "Unexpected end of input");
          num += "." + frac;
        }
        Push(num.empty() ? TokenType::kUnaryOperator : TokenType::kNumericLiteral,
             std::string(1, c) + num, start);
        continue;
      }
    }
    bool matched = false;
    for (const Rule& rule : kRules) {
      if (rule.seq[0] != c) continue;
      if (rule.seq == "}}" && curly_depth_ > 0) continue;
      if (s_.compare(pos_, rule.seq.size(), rule.seq) != 0) continue;
      Push(rule.type, std::string(rule.seq), pos_);
      if (rule.type == TokenType::kOpenExpression) curly_depth_ = 0;
      if (rule.type == TokenType::kOpenCurlyBracket) ++curly_depth_;
      if (rule.type == TokenType::kCloseCurlyBracket) --curly_depth_;
      pos_ += rule.seq.size();
      if (rule.type == TokenType::kCloseStatement) LexRawBody();
      matched = true;
      break;
    }
    if (matched) continue;
    if (c == '\'' || c == '"') {
      const size_t start = pos_++;
      Result<std::string> value = DecodeStringLiteral(s_, &pos_, c);
      if (!value.ok()) return Fail(start, value.error().message);
      Push(TokenType::kStringLiteral, std::move(value).value(), start);
      ++pos_;
      continue;
    }
    if (IsDigit(c)) {
      const size_t start = pos_;
      std::string num;
      if (!ConsumeWhile(is_digit, num)) return Fail(pos_, "Unexpected end of input");
      if (!LastIs(TokenType::kDot) && pos_ + 1 < n && s_[pos_] == '.' && IsDigit(s_[pos_ + 1])) {
        ++pos_;
        std::string frac;
        if (!ConsumeWhile(is_digit, frac)) return Fail(pos_, "Unexpected end of input");
        num += "." + frac;
      }
      Push(TokenType::kNumericLiteral, std::move(num), start);
      continue;
    }
    if (text::IsAsciiWord(static_cast<unsigned char>(c))) {
      const size_t start = pos_;
      std::string word;
      if (!ConsumeWhile(is_word, word)) return Fail(pos_, "Unexpected end of input");
      Push(TokenType::kIdentifier, std::move(word), start);
      continue;
    }
    size_t next = pos_;
    std::string shown;
    text::AppendUtf8(shown, text::DecodeUtf8(s_, next));
    return Fail(pos_, "Unexpected character: " + shown);
  }
  return std::move(tokens_);
}

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view source) {
  Lexer lexer(source, Preprocess(source));
  return lexer.Run();
}

}  // namespace hubwatch::chat_template
