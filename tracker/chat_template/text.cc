#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template::text {

char32_t DecodeUtf8Slow(std::string_view s, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) {
    ++i;
    return c;
  }
  int extra = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((c & 0xE0) == 0xC0) {
    extra = 1, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    extra = 2, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    extra = 3, cp = c & 0x07, min = 0x10000;
  } else {
    ++i;
    return 0xFFFD;
  }
  if (i + extra >= s.size()) {
    ++i;
    return 0xFFFD;
  }
  for (int k = 1; k <= extra; ++k) {
    const unsigned char cc = byte(i + k);
    if ((cc & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += extra + 1;
  return cp;
}

void AppendUtf8(std::string& out, char32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsJsWhitespace(char32_t cp) {
  if (cp <= 32) return cp == 32 || (cp >= 9 && cp <= 13);
  return cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

std::string_view TrimStart(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t next = i;
    if (!IsJsWhitespace(DecodeUtf8(s, next))) break;
    i = next;
  }
  return s.substr(i);
}

std::string_view TrimEnd(std::string_view s) {
  // Walk forward remembering where the trailing whitespace run starts.
  size_t i = 0;
  size_t keep = 0;
  while (i < s.size()) {
    const char32_t cp = DecodeUtf8(s, i);
    if (!IsJsWhitespace(cp)) keep = i;
  }
  return s.substr(0, keep);
}

size_t Utf16Length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) n += DecodeUtf8(s, i) >= 0x10000 ? 2 : 1;
  return n;
}

std::vector<std::string_view> CodePoints(std::string_view s) {
  std::vector<std::string_view> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    DecodeUtf8(s, i);
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool Utf16At(std::string_view s, double index, std::string& out) {
  const double length = static_cast<double>(Utf16Length(s));
  double k = index < 0 ? length + index : index;
  if (k < 0 || k >= length) return false;
  const size_t target = static_cast<size_t>(k);
  size_t unit = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t cp = DecodeUtf8(s, i);
    const size_t units = cp >= 0x10000 ? 2 : 1;
    if (target < unit + units) {
      if (units == 2) {
        AppendUtf8(out, 0xFFFD);
      } else {
        out.append(s.substr(start, i - start));
      }
      return true;
    }
    unit += units;
  }
  return false;
}

std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

int CompareUtf16(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const char32_t x = DecodeUtf8(a, i);
    const char32_t y = DecodeUtf8(b, j);
    if (x == y) continue;
    // Astral code points sort by their high surrogate (0xD800..0xDBFF) in UTF-16.
    const auto unit = [](char32_t cp) -> char32_t {
      return cp >= 0x10000 ? 0xD800 + ((cp - 0x10000) >> 10) : cp;
    };
    const char32_t ux = unit(x);
    const char32_t uy = unit(y);
    if (ux != uy) return ux < uy ? -1 : 1;
    return x < y ? -1 : 1;
  }
  if (i < a.size()) return 1;
  if (j < b.size()) return -1;
  return 0;
}

}  // namespace hubwatch::chat_template::text
