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
  const char* error = ReadJsonString(text_, &pos_, out, arena);
  return error == nullptr || Fail(error);
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
