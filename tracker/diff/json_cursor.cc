#include "tracker/diff/json_cursor.h"

#include <array>
#include <charconv>
#include <cstring>
#include <limits>

#include "tracker/diff/json_text.h"

namespace hubwatch::diff {
namespace {

// The bytes SkipValue stops at inside a container.
constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> table{};
  for (unsigned char c : {'"', '{', '}', '[', ']'}) table[c] = true;
  return table;
}();

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

// Reads the XXXX of a \uXXXX escape at *pos, and the low half that must follow a high surrogate;
// advances *pos past them. Returns nullptr, or what is wrong (*pos then unspecified).
const char* DecodeUnicodeEscape(std::string_view text, size_t* pos, uint32_t* code_point) {
  auto read_hex4 = [&](uint32_t* value) {
    if (*pos + 4 > text.size()) return false;
    *value = 0;
    for (int k = 0; k < 4; ++k) {
      const int digit = HexValue(text[*pos + k]);
      if (digit < 0) return false;
      *value = *value * 16 + static_cast<uint32_t>(digit);
    }
    *pos += 4;
    return true;
  };
  uint32_t unit = 0;
  if (!read_hex4(&unit)) return "invalid \\u escape";
  if (unit >= 0xDC00 && unit <= 0xDFFF) return "lone low surrogate in a string";
  if (unit >= 0xD800 && unit <= 0xDBFF) {
    uint32_t low = 0;
    if (*pos + 2 > text.size() || text[*pos] != '\\' || text[*pos + 1] != 'u') {
      return "lone high surrogate in a string";
    }
    *pos += 2;
    if (!read_hex4(&low) || low < 0xDC00 || low > 0xDFFF) {
      return "invalid surrogate pair in a string";
    }
    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }
  *code_point = unit;
  return nullptr;
}

}  // namespace

bool JsonCursor::Fail(std::string_view what) {
  if (error_.empty()) error_ = "byte " + std::to_string(pos_) + ": " + std::string(what);
  return false;
}

bool JsonCursor::ExpectFailed(char c) {
  if (failed()) return false;
  return Fail(pos_ < text_.size() ? std::string("expected '") + c + "'"
                                  : std::string("expected '") + c + "', found the end");
}

bool JsonCursor::ReadString(std::string_view* out, StringArena* arena) {
  if (!Expect('"')) return false;
  const size_t start = pos_;
  while (pos_ < text_.size()) {
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      *out = text_.substr(start, pos_ - start);
      ++pos_;
      return true;
    }
    if (c == '\\') return ReadEscaped(start, out, arena);
    if (c < 0x20) return Fail("control character in a string");
    if (c < 0x80) {
      ++pos_;
      continue;
    }
    const size_t length = Utf8SequenceLength(text_, pos_);
    if (length == 0) return Fail("invalid UTF-8 in a string");
    pos_ += length;
  }
  return Fail("unterminated string");
}

bool JsonCursor::ReadEscaped(size_t start, std::string_view* out, StringArena* arena) {
  std::string decoded(text_.substr(start, pos_ - start));
  while (pos_ < text_.size()) {
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      arena->push_back(std::move(decoded));
      *out = arena->back();
      return true;
    }
    if (c < 0x20) return Fail("control character in a string");
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text_, pos_);
      if (length == 0) return Fail("invalid UTF-8 in a string");
      decoded.append(text_.substr(pos_, length));
      pos_ += length;
      continue;
    }
    if (c != '\\') {
      decoded += static_cast<char>(c);
      ++pos_;
      continue;
    }
    if (pos_ + 1 >= text_.size()) return Fail("unterminated string");
    const char e = text_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        decoded += e;
        continue;
      case 'b':
        decoded += '\b';
        continue;
      case 'f':
        decoded += '\f';
        continue;
      case 'n':
        decoded += '\n';
        continue;
      case 'r':
        decoded += '\r';
        continue;
      case 't':
        decoded += '\t';
        continue;
      case 'u':
        break;
      default:
        pos_ -= 2;
        return Fail("invalid escape in a string");
    }
    uint32_t code_point = 0;
    const char* error = DecodeUnicodeEscape(text_, &pos_, &code_point);
    if (error) return Fail(error);
    AppendUtf8(code_point, decoded);
  }
  return Fail("unterminated string");
}

bool JsonCursor::ReadInt64(int64_t* out) {
  if (failed()) return false;
  SkipSpace();
  const bool negative = pos_ < text_.size() && text_[pos_] == '-';
  if (negative) ++pos_;
  if (pos_ >= text_.size() || !IsDigit(text_[pos_])) return Fail("expected an integer");
  const size_t digits = pos_;
  uint64_t magnitude = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  while (pos_ < text_.size() && IsDigit(text_[pos_])) {
    const auto digit = static_cast<uint64_t>(text_[pos_] - '0');
    if (magnitude > (limit - digit) / 10) return Fail("integer out of range");
    magnitude = magnitude * 10 + digit;
    ++pos_;
  }
  if (text_[digits] == '0' && pos_ - digits > 1) return Fail("leading zero in a number");
  if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
    return Fail("expected an integer");
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

bool JsonCursor::ReadDouble(double* out) {
  if (failed()) return false;
  SkipSpace();
  const size_t start = pos_;
  auto digits = [&]() {
    const size_t from = pos_;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    return pos_ - from;
  };
  if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
  const size_t int_start = pos_;
  const size_t int_digits = digits();
  if (int_digits == 0) return Fail("expected a number");
  if (text_[int_start] == '0' && int_digits > 1) return Fail("leading zero in a number");
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    if (digits() == 0) return Fail("expected digits after '.'");
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (digits() == 0) return Fail("expected digits in an exponent");
  }
  const auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, *out);
  if (ec != std::errc() || end != text_.data() + pos_) return Fail("number out of range");
  return true;
}

bool JsonCursor::SkipValue(std::string_view* raw) {
  if (failed()) return false;
  SkipSpace();
  const size_t start = pos_;
  // Strings: the next quote not escaped by an odd run of backslashes.
  auto skip_string = [&]() {
    size_t from = pos_ + 1;  // after the opening quote
    while (true) {
      const void* found = std::memchr(text_.data() + from, '"', text_.size() - from);
      if (found == nullptr) {
        pos_ = text_.size();
        return Fail("unterminated string");
      }
      const size_t quote = static_cast<size_t>(static_cast<const char*>(found) - text_.data());
      size_t backslashes = 0;
      while (text_[quote - 1 - backslashes] == '\\') ++backslashes;  // stops at the opening quote
      if (backslashes % 2 == 0) {
        pos_ = quote + 1;
        return true;
      }
      from = quote + 1;
    }
  };
  const char c = pos_ < text_.size() ? text_[pos_] : '\0';
  if (c == '"') {
    if (!skip_string()) return false;
  } else if (c == '{' || c == '[') {
    std::string closers(1, c == '{' ? '}' : ']');
    ++pos_;
    while (!closers.empty()) {
      while (pos_ < text_.size() && !kStructural[static_cast<unsigned char>(text_[pos_])]) ++pos_;
      if (pos_ >= text_.size()) return Fail("unterminated object or array");
      const char ch = text_[pos_];
      if (ch == '"') {
        if (!skip_string()) return false;
        continue;
      }
      if (ch == '{' || ch == '[') {
        if (closers.size() >= static_cast<size_t>(kMaxJsonDepth)) {
          return Fail("JSON nested too deeply");
        }
        closers += ch == '{' ? '}' : ']';
      } else if (ch == '}' || ch == ']') {
        if (ch != closers.back()) return Fail("mismatched bracket");
        closers.pop_back();
      }
      ++pos_;
    }
  } else if (c == 't' || c == 'f' || c == 'n') {
    const std::string_view literal = c == 't' ? "true" : c == 'f' ? "false" : "null";
    if (text_.substr(pos_, literal.size()) != literal) return Fail("expected a value");
    pos_ += literal.size();
  } else if (c == '-' || IsDigit(c)) {
    double ignored = 0;
    if (!ReadDouble(&ignored)) return false;
  } else {
    return Fail("expected a value");
  }
  *raw = text_.substr(start, pos_ - start);
  return true;
}

bool JsonCursor::NextMember(bool* first, std::string_view* key, StringArena* arena) {
  const char c = Peek();
  if (failed()) return false;
  if (c == '}') {
    ++pos_;
    return false;
  }
  if (!*first && !Expect(',')) return false;
  *first = false;
  if (!ReadString(key, arena)) return false;
  return Expect(':');
}

bool JsonCursor::NextElement(bool* first) {
  const char c = Peek();
  if (failed()) return false;
  if (c == ']') {
    ++pos_;
    return false;
  }
  if (!*first && !Expect(',')) return false;
  *first = false;
  return true;
}

}  // namespace hubwatch::diff
