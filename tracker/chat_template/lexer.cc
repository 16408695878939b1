#include "tracker/chat_template/lexer.h"

#include <algorithm>
#include <cstdint>
#include <utility>

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

// Text with, for every byte, its offset in the original source.
struct Mapped {
  std::string text;
  std::vector<uint32_t> origin;

  void Append(const Mapped& from, size_t begin, size_t end) {
    text.append(from.text, begin, end - begin);
    origin.insert(origin.end(), from.origin.begin() + static_cast<std::ptrdiff_t>(begin),
                  from.origin.begin() + static_cast<std::ptrdiff_t>(end));
  }
};

bool IsLineTerminatorBefore(const std::string& s, size_t i) {
  if (i == 0) return true;
  const char prev = s[i - 1];
  if (prev == '\n' || prev == '\r') return true;
  // U+2028 / U+2029 are E2 80 A8 / E2 80 A9.
  return i >= 3 && static_cast<unsigned char>(s[i - 3]) == 0xE2 &&
         static_cast<unsigned char>(s[i - 2]) == 0x80 &&
         (static_cast<unsigned char>(s[i - 1]) == 0xA8 ||
          static_cast<unsigned char>(s[i - 1]) == 0xA9);
}

// Length of the JS whitespace code point at s[i], or 0.
size_t WhitespaceAt(std::string_view s, size_t i) {
  size_t next = i;
  return text::IsJsWhitespace(text::DecodeUtf8(s, next)) ? next - i : 0;
}

// Length of the whitespace code point ending right before s[end] (end > begin), or 0.
size_t WhitespaceBefore(std::string_view s, size_t begin, size_t end) {
  size_t start = end - 1;
  while (start > begin && end - start < 4 &&
         (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
    --start;
  }
  size_t next = start;
  const char32_t cp = text::DecodeUtf8(s, next);
  return next == end && text::IsJsWhitespace(cp) ? end - start : 0;
}

// lstrip_blocks: /^[ \t]*({[#%-])/gm -> "$1".
Mapped LstripBlocks(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  size_t copied = 0;  // s[copied..] is not yet in out
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsLineTerminatorBefore(s, i)) continue;
    size_t j = i;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    if (j > i && j + 1 < s.size() && s[j] == '{' &&
        (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) {
      out.Append(in, copied, i);
      copied = j;
      i = j;
    }
  }
  out.Append(in, copied, s.size());
  return out;
}

// trim_blocks: /([#%-]})\n/g -> "$1".
Mapped TrimBlocks(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  size_t copied = 0;
  for (size_t i = 0; i + 2 < s.size(); ++i) {
    if ((s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' && s[i + 2] == '\n') {
      out.Append(in, copied, i + 2);
      copied = i + 3;
      i += 2;
    }
  }
  out.Append(in, copied, s.size());
  return out;
}

// Matches /{%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/ at s[i]; on success returns the match
// end and the flags and the start of the trailing whitespace.
bool MatchGenerationTag(std::string_view s, size_t i, size_t& end, bool& lstrip, bool& rstrip,
                        size_t& after) {
  if (s.substr(i, 2) != "{%") return false;
  size_t j = i + 2;
  lstrip = j < s.size() && s[j] == '-';
  if (lstrip) ++j;
  while (j < s.size() && WhitespaceAt(s, j) > 0) j += WhitespaceAt(s, j);
  if (s.substr(j, 3) == "end") j += 3;
  if (s.substr(j, 10) != "generation") return false;
  j += 10;
  while (j < s.size() && WhitespaceAt(s, j) > 0) j += WhitespaceAt(s, j);
  rstrip = j < s.size() && s[j] == '-';
  if (rstrip) ++j;
  if (s.substr(j, 2) != "%}") return false;
  j += 2;
  after = j;
  while (j < s.size() && WhitespaceAt(s, j) > 0) j += WhitespaceAt(s, j);
  end = j;
  return true;
}

Mapped RemoveGenerationTags(const Mapped& in) {
  const std::string& s = in.text;
  Mapped out;
  size_t last = 0;
  for (size_t i = s.find("{%"); i != std::string::npos; i = s.find("{%", i + 1)) {
    size_t end = 0;
    size_t after = 0;
    bool lstrip = false;
    bool rstrip = false;
    if (i < last || !MatchGenerationTag(s, i, end, lstrip, rstrip, after)) continue;
    size_t keep_end = i;
    while (lstrip && keep_end > last) {
      const size_t len = WhitespaceBefore(s, last, keep_end);
      if (len == 0) break;
      keep_end -= len;
    }
    out.Append(in, last, keep_end);
    if (!rstrip) out.Append(in, after, end);
    last = end;
    i = end - 1;
  }
  out.Append(in, last, s.size());
  return out;
}

Mapped Preprocess(std::string_view source) {
  Mapped mapped;
  mapped.text.assign(source);
  mapped.origin.resize(source.size());
  for (size_t i = 0; i < source.size(); ++i) mapped.origin[i] = static_cast<uint32_t>(i);
  if (!mapped.text.empty() && mapped.text.back() == '\n') {
    mapped.text.pop_back();
    mapped.origin.pop_back();
  }
  return RemoveGenerationTags(TrimBlocks(LstripBlocks(mapped)));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

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
  bool ConsumeString(char quote, std::string& out, std::string& error);
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
    size_t end = s_.size();
    for (size_t i = s_.find("{%", pos_); i != std::string::npos; i = s_.find("{%", i + 1)) {
      size_t j = i + 2;
      if (j < s_.size() && s_[j] == '-') ++j;
      while (j < s_.size() && WhitespaceAt(s_, j) > 0) j += WhitespaceAt(s_, j);
      if (s_.compare(j, 6, "endraw") == 0) {
        end = i;
        break;
      }
    }
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

bool Lexer::ConsumeString(char quote, std::string& out, std::string& error) {
  char16_t pending_high = 0;
  const auto flush_high = [&] {
    if (pending_high != 0) text::AppendUtf8(out, 0xFFFD);
    pending_high = 0;
  };
  while (true) {
    if (pos_ >= s_.size()) {
      error = "Unexpected end of input";
      return false;
    }
    const char c = s_[pos_];
    if (c == quote) break;
    ++pos_;
    if (c != '\\') {
      flush_high();
      out.push_back(c);
      continue;
    }
    if (pos_ >= s_.size()) {
      error = "Unexpected end of input";
      return false;
    }
    const char escaped = s_[pos_++];
    if (escaped == 'x' || escaped == 'u') {
      const size_t n = escaped == 'x' ? 2 : 4;
      const std::string hex = s_.substr(pos_, n);
      if (hex.size() != n || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
        error = std::string("Invalid hexadecimal escape sequence: \\") + escaped + hex;
        return false;
      }
      pos_ += n;
      const char16_t unit = static_cast<char16_t>(std::stoul(hex, nullptr, 16));
      if (unit >= 0xDC00 && unit <= 0xDFFF && pending_high != 0) {
        text::AppendUtf8(out, 0x10000 + ((pending_high - 0xD800) << 10) + (unit - 0xDC00));
        pending_high = 0;
      } else {
        flush_high();
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          pending_high = unit;
        } else {
          text::AppendUtf8(out, unit);
        }
      }
      continue;
    }
    flush_high();
    switch (escaped) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case '"':
        out.push_back('"');
        break;
      case '\\':
        out.push_back('\\');
        break;
      default:
        error = std::string("Unexpected escaped character: ") + escaped;
        return false;
    }
  }
  flush_high();
  return true;
}

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
      std::string value;
      std::string error;
      if (!ConsumeString(c, value, error)) return Fail(start, error);
      Push(TokenType::kStringLiteral, std::move(value), start);
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
