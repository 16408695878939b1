#pragma once

// Text helpers with JavaScript string semantics over UTF-8.
//
// The reference implementation (@huggingface/jinja) works on JavaScript strings, i.e. UTF-16.
// The engine keeps UTF-8 and reproduces the JavaScript behaviour that chat templates can
// observe: what counts as whitespace (String.prototype.trim, /\s/), lengths and indices in
// UTF-16 code units, iteration by code point (Array.from). Case mapping is ASCII-only (see
// DIVERGENCES in template.h). Invalid UTF-8 bytes decode as U+FFFD, one byte at a time.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::chat_template::text {

char32_t DecodeUtf8Slow(std::string_view s, size_t& i);

// Decodes the code point starting at s[i] and advances i past it. REQUIRES: i < s.size().
inline char32_t DecodeUtf8(std::string_view s, size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    ++i;
    return c;
  }
  return DecodeUtf8Slow(s, i);
}

// Appends the UTF-8 encoding of cp (surrogates and out-of-range values become U+FFFD).
void AppendUtf8(std::string& out, char32_t cp);

// JavaScript's WhiteSpace + LineTerminator set, as used by trim() and /\s/.
bool IsJsWhitespace(char32_t cp);

// /\w/ without the u flag: [A-Za-z0-9_].
inline bool IsAsciiWord(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// String.prototype.trimStart / trimEnd / trim.
std::string_view TrimStart(std::string_view s);
std::string_view TrimEnd(std::string_view s);
inline std::string_view Trim(std::string_view s) { return TrimEnd(TrimStart(s)); }

// Length in UTF-16 code units (String.prototype.length).
size_t Utf16Length(std::string_view s);

// The code points of s, each as a view into s (Array.from(string)).
std::vector<std::string_view> CodePoints(std::string_view s);

// String.prototype.at(index) by UTF-16 code unit; negative counts from the end. Returns false
// when out of range. A lone surrogate half (inside an astral character) is returned as U+FFFD.
bool Utf16At(std::string_view s, double index, std::string& out);

std::string AsciiUpper(std::string_view s);
std::string AsciiLower(std::string_view s);

// Compares by UTF-16 code units, as JavaScript's < on strings does. Returns <0, 0 or >0.
int CompareUtf16(std::string_view a, std::string_view b);

}  // namespace hubwatch::chat_template::text
