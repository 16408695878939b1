#include "daemon/audit/python_tokens.h"

#include <cstddef>

namespace hubwatch::audit {
namespace {

bool IsNameStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool IsNameChar(unsigned char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// The string prefix letters that may precede a quote ("rb", "f", "U", ...), or 0 when
// source[i...] is not a prefixed string.
size_t StringPrefixLength(std::string_view s, size_t i) {
  size_t n = 0;
  while (n < 2 && i + n < s.size()) {
    char c = static_cast<char>(s[i + n] | 0x20);
    if (c != 'r' && c != 'b' && c != 'u' && c != 'f') break;
    ++n;
  }
  if (n > 0 && i + n < s.size() && (s[i + n] == '"' || s[i + n] == '\'')) return n;
  return 0;
}

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view s) : s_(s) {}

  std::vector<PyToken> Run() {
    while (i_ < s_.size()) Step();
    if (!tokens_.empty() && tokens_.back().kind != PyToken::Kind::kNewline) {
      Emit(PyToken::Kind::kNewline, i_, 0);
    }
    return std::move(tokens_);
  }

 private:
  void Step() {
    unsigned char c = static_cast<unsigned char>(s_[i_]);
    if (c == '\n') {
      if (depth_ == 0 && !tokens_.empty() && tokens_.back().kind != PyToken::Kind::kNewline) {
        Emit(PyToken::Kind::kNewline, i_, 1);
      }
      NewLine(i_ + 1);
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++i_;
      return;
    }
    if (c == '#') {
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      return;
    }
    if (c == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
      i_ += s_[i_ + 1] == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n' ? 3 : 2;
      NewLine(i_);
      return;
    }
    if (c == '"' || c == '\'') {
      String(i_, 0);
      return;
    }
    if (IsNameStart(c)) {
      if (size_t prefix = StringPrefixLength(s_, i_); prefix > 0) {
        String(i_, prefix);
        return;
      }
      size_t start = i_;
      while (i_ < s_.size() && IsNameChar(static_cast<unsigned char>(s_[i_]))) ++i_;
      Emit(PyToken::Kind::kName, start, i_ - start);
      return;
    }
    if (c >= '0' && c <= '9') {
      size_t start = i_;
      while (i_ < s_.size() && (IsNameChar(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) {
        ++i_;
      }
      Emit(PyToken::Kind::kNumber, start, i_ - start);
      return;
    }
    Operator(c);
  }

  void Operator(unsigned char c) {
    size_t start = i_;
    size_t len = 1;
    char next = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
    if (c == '(' || c == '[' || c == '{') {
      ++depth_;
    } else if ((c == ')' || c == ']' || c == '}') && depth_ > 0) {
      --depth_;
    } else if ((c == '*' && next == '*') || (c == '/' && next == '/') ||
               (c == '-' && next == '>')) {
      len = 2;
    } else if (next == '=' && std::string_view("=!<>+-*/%&|^@:").find(static_cast<char>(c)) !=
                                  std::string_view::npos) {
      len = 2;
    }
    i_ += len;
    Emit(PyToken::Kind::kOp, start, len);
  }

  // A string literal from `start` (its prefix, `prefix` letters long).
  void String(size_t start, size_t prefix) {
    PyToken t;
    for (size_t k = 0; k < prefix; ++k) {
      char p = static_cast<char>(s_[start + k] | 0x20);
      t.f_string = t.f_string || p == 'f';
      t.raw = t.raw || p == 'r';
    }
    size_t q = start + prefix;
    char quote = s_[q];
    bool triple = q + 2 < s_.size() && s_[q + 1] == quote && s_[q + 2] == quote;
    size_t body = q + (triple ? 3 : 1);
    int line = line_;
    int column = static_cast<int>(start - line_start_) + 1;
    size_t j = body;
    size_t body_end = s_.size();
    size_t end = s_.size();
    while (j < s_.size()) {
      char c = s_[j];
      if (c == '\\' && j + 1 < s_.size()) {
        if (s_[j + 1] == '\n') NewLine(j + 2);
        j += 2;
        continue;
      }
      if (c == '\n') {
        if (!triple) {  // unterminated: the string ends with its line
          body_end = end = j;
          break;
        }
        NewLine(j + 1);
      }
      if (c == quote &&
          (!triple || (j + 2 < s_.size() && s_[j + 1] == quote && s_[j + 2] == quote))) {
        body_end = j;
        end = j + (triple ? 3 : 1);
        break;
      }
      ++j;
    }
    i_ = end;
    t.kind = PyToken::Kind::kString;
    t.offset = static_cast<uint32_t>(start);
    t.length = static_cast<uint32_t>(end - start);
    t.body_offset = static_cast<uint32_t>(body);
    t.body_length = static_cast<uint32_t>(body_end > body ? body_end - body : 0);
    t.line = line;
    t.column = column;
    tokens_.push_back(t);
  }

  void Emit(PyToken::Kind kind, size_t start, size_t len) {
    PyToken t;
    t.kind = kind;
    t.offset = static_cast<uint32_t>(start);
    t.length = static_cast<uint32_t>(len);
    t.line = line_;
    t.column = static_cast<int>(start - line_start_) + 1;
    tokens_.push_back(t);
  }

  void NewLine(size_t next_line_start) {
    ++line_;
    line_start_ = next_line_start;
    if (i_ < next_line_start) i_ = next_line_start;
  }

  std::string_view s_;
  size_t i_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
  int depth_ = 0;
  std::vector<PyToken> tokens_;
};

}  // namespace

std::vector<PyToken> TokenizePython(std::string_view source) { return Tokenizer(source).Run(); }

std::string PyStringValue(std::string_view source, const PyToken& token) {
  std::string_view body = source.substr(token.body_offset, token.body_length);
  if (token.raw) return std::string(body);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    char e = body[i + 1];
    if (e == '\\' || e == '\'' || e == '"' || e == '/') {
      out += e;
      ++i;
    } else if (e == '\n') {
      ++i;
    } else {
      out += body[i];  // kept as written
    }
  }
  return out;
}

}  // namespace hubwatch::audit
