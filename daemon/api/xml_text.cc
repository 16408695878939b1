#include "daemon/api/xml_text.h"

#include <cstdio>
#include <utility>

#include "estimator/base/text.h"

#include "tracker/diff/json_text.h"

namespace hubwatch::api {

namespace {

// The five predefined entities.
const char* Entity(char c) {
  static constexpr std::pair<char, const char*> kEntities[] = {
      {'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&apos;"}};
  for (const auto& [ch, entity] : kEntities) {
    if (c == ch) return entity;
  }
  return nullptr;
}

bool IsXmlChar(unsigned char c) { return c >= 0x20 || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::string XmlEscape(std::string_view text) {
  const std::string valid = diff::SanitizeUtf8(text);
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  for (size_t i = 0; i < valid.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(valid[i]);
    // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters either.
    if (c == 0xEF && i + 2 < valid.size() && static_cast<unsigned char>(valid[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(valid[i + 2]) & 0xFE) == 0xBE) {
      i += 2;
    } else if (const uint32_t bidi = BidiControlAt(valid, i)) {
      char code[16];  // shown, not applied: a feed reader would reorder the title
      std::snprintf(code, sizeof code, "\\u%04x", bidi);
      out += code;
      i += BidiControlLength(bidi) - 1;
    } else if (const char* entity = Entity(valid[i])) {
      out += entity;
    } else if (IsXmlChar(c)) {
      out += valid[i];
    }
  }
  return out;
}

}  // namespace hubwatch::api
