#include "daemon/page/escape.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "estimator/base/text.h"

namespace hubwatch::page {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// The length of the valid UTF-8 sequence at text[i], or 0 when it is not one.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  uint32_t min = 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  // C1 controls and noncharacters are not allowed in HTML text either.
  if ((cp >= 0x80 && cp <= 0x9F) || (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) {
    return 0;
  }
  return n;
}

// Copies runs of plain bytes and calls special(c) for each ASCII byte that `is_special` picks;
// invalid or forbidden characters become U+FFFD, and a bidi control (BidiControlAt) becomes the
// visible text `bidi_prefix` + "u202e" (the backslash, itself escaped where it is special).
template <class IsSpecial, class Special>
void Walk(std::string& out, std::string_view text, bool keep_newlines, std::string_view bidi_prefix,
          IsSpecial is_special, Special special) {
  size_t i = 0, start = 0;
  auto flush = [&](size_t end) { out.append(text.data() + start, end - start); };
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (is_special(static_cast<char>(c))) {
        flush(i);
        special(static_cast<char>(c));
        start = ++i;
      } else {
        ++i;
      }
      continue;
    }
    if (c == '\t' || c == '\n') {
      if (c == '\n' && !keep_newlines) {
        flush(i);
        out += ' ';
        start = ++i;
      } else {
        ++i;
      }
      continue;
    }
    const size_t n = c >= 0x80 ? Utf8Length(text, i) : 0;
    if (n == 0) {
      flush(i);
      out += kReplacement;
      start = ++i;
      continue;
    }
    if (const uint32_t bidi = BidiControlAt(text, i)) {
      flush(i);
      char code[16];
      std::snprintf(code, sizeof code, "u%04x", bidi);
      out += bidi_prefix;
      out += code;
      start = i += n;
      continue;
    }
    i += n;
  }
  flush(i);
}

void AppendEntity(std::string& out, char c) {
  const char* entity = c == '&'    ? "&amp;"
                       : c == '<'  ? "&lt;"
                       : c == '>'  ? "&gt;"
                       : c == '"'  ? "&quot;"
                       : c == '\'' ? "&#39;"
                                   : nullptr;
  if (entity) {
    out += entity;
  } else {
    out += c;
  }
}

}  // namespace

void AppendHtml(std::string& out, std::string_view text) {
  Walk(
      out, text, true, "\\",
      [](char c) { return c == '&' || c == '<' || c == '>' || c == '"' || c == '\''; },
      [&](char c) { AppendEntity(out, c); });
}

std::string Html(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  AppendHtml(out, text);
  return out;
}

void AppendMarkdown(std::string& out, std::string_view text, bool keep_newlines) {
  static constexpr std::string_view kMarkdown = "\\`*_[]()#+-!|~{}";
  Walk(
      out, text, keep_newlines, "\\\\",
      [](char c) {
        return c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' ||
               kMarkdown.find(c) != std::string_view::npos;
      },
      [&](char c) {
        if (kMarkdown.find(c) != std::string_view::npos) {
          out += '\\';
          out += c;
        } else {
          AppendEntity(out, c);
        }
      });
}

std::string CleanText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  Walk(
      out, text, true, "\\", [](char) { return false; }, [](char) {});
  return out;
}

size_t LongestRun(std::string_view text, char c) {
  size_t best = 0, run = 0;
  for (char x : text) {
    run = x == c ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

}  // namespace hubwatch::page
