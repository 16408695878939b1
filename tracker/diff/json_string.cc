#include "tracker/diff/json_string.h"

#include <cstdint>
#include <utility>

#include "tracker/diff/json_text.h"

namespace hubwatch::diff {
namespace {

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

// The rest of a string with escapes: `start` is where its contents start, pos the first
// backslash. As ReadJsonString.
const char* ReadEscaped(std::string_view text, size_t start, size_t& pos, std::string_view* out,
                        StringArena* arena) {
  std::string decoded(text.substr(start, pos - start));
  while (pos < text.size()) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c == '"') {
      ++pos;
      arena->push_back(std::move(decoded));
      *out = arena->back();
      return nullptr;
    }
    if (c < 0x20) return "control character in a string";
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text, pos);
      if (length == 0) return "invalid UTF-8 in a string";
      decoded.append(text.substr(pos, length));
      pos += length;
      continue;
    }
    if (c != '\\') {
      decoded += static_cast<char>(c);
      ++pos;
      continue;
    }
    if (pos + 1 >= text.size()) return "unterminated string";
    const char e = text[pos + 1];
    pos += 2;
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
        pos -= 2;
        return "invalid escape in a string";
    }
    uint32_t code_point = 0;
    const char* error = DecodeUnicodeEscape(text, &pos, &code_point);
    if (error) return error;
    AppendUtf8(code_point, decoded);
  }
  return "unterminated string";
}

}  // namespace

const char* ReadJsonString(std::string_view text, size_t* position, std::string_view* out,
                           StringArena* arena) {
  size_t& pos = *position;
  const size_t start = pos;
  while (pos < text.size()) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c == '"') {
      *out = text.substr(start, pos - start);
      ++pos;
      return nullptr;
    }
    if (c == '\\') return ReadEscaped(text, start, pos, out, arena);
    if (c < 0x20) return "control character in a string";
    if (c < 0x80) {
      ++pos;
      continue;
    }
    const size_t length = Utf8SequenceLength(text, pos);
    if (length == 0) return "invalid UTF-8 in a string";
    pos += length;
  }
  return "unterminated string";
}

}  // namespace hubwatch::diff
