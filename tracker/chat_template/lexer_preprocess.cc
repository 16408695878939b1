#include "tracker/chat_template/lexer_preprocess.h"

#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template::lexer_internal {

void Mapped::Append(const Mapped& from, size_t begin, size_t end) {
  text.append(from.text, begin, end - begin);
  origin.insert(origin.end(), from.origin.begin() + static_cast<std::ptrdiff_t>(begin),
                from.origin.begin() + static_cast<std::ptrdiff_t>(end));
}

size_t WhitespaceAt(std::string_view s, size_t i) {
  size_t next = i;
  return text::IsJsWhitespace(text::DecodeUtf8(s, next)) ? next - i : 0;
}

namespace {

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

}  // namespace

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

}  // namespace hubwatch::chat_template::lexer_internal
