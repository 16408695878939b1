#include "tracker/chat_template/string_literal.h"

#include <string>

#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template::lexer_internal {
namespace {

// The byte a one-character escape stands for; '\0' when `escaped` is not one.
char SimpleEscape(char escaped) {
  switch (escaped) {
    case 'n':
      return '\n';
    case 't':
      return '\t';
    case 'r':
      return '\r';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'v':
      return '\v';
    case '\'':
    case '"':
    case '\\':
      return escaped;
    default:
      return '\0';
  }
}

}  // namespace

Result<std::string> DecodeStringLiteral(std::string_view s, size_t* pos, char quote) {
  std::string out;
  char16_t pending_high = 0;
  const auto flush_high = [&] {
    if (pending_high != 0) text::AppendUtf8(out, 0xFFFD);
    pending_high = 0;
  };
  size_t& i = *pos;
  while (true) {
    if (i >= s.size()) return Error::InvalidInput("Unexpected end of input");
    const char c = s[i];
    if (c == quote) break;
    ++i;
    if (c != '\\') {
      flush_high();
      out.push_back(c);
      continue;
    }
    if (i >= s.size()) return Error::InvalidInput("Unexpected end of input");
    const char escaped = s[i++];
    if (escaped == 'x' || escaped == 'u') {
      const size_t n = escaped == 'x' ? 2 : 4;
      const std::string hex(s.substr(i, n));
      if (hex.size() != n || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
        return Error::InvalidInput(std::string("Invalid hexadecimal escape sequence: \\") +
                                   escaped + hex);
      }
      i += n;
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
    const char decoded = SimpleEscape(escaped);
    if (decoded == '\0') {
      return Error::InvalidInput(std::string("Unexpected escaped character: ") + escaped);
    }
    out.push_back(decoded);
  }
  flush_high();
  return out;
}

}  // namespace hubwatch::chat_template::lexer_internal
