#include "estimator/base/text.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace hubwatch {

std::string Grouped(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string Clip(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the character that was cut.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::string HexLower(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

std::string QuoteJson(const nlohmann::json& value) {
  if (value.is_array()) return "an array of " + Grouped(value.size()) + " values";
  if (value.is_object()) return "an object of " + Grouped(value.size()) + " keys";
  if (value.is_string()) {
    // The string clipped before it is escaped, so a 10 MB string costs 80 bytes.
    const nlohmann::json clipped = Clip(value.get_ref<const std::string&>());
    // dump() escapes C0 but leaves DEL and C1 as they are.
    return EscapeControls(clipped.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return Clip(value.dump());
}

uint32_t BidiControlAt(std::string_view text, size_t i) {
  const auto at = [&](size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
  };
  if (at(0) == 0xD8 && at(1) == 0x9C) return 0x061C;
  if (at(0) != 0xE2) return 0;
  const unsigned char b1 = at(1), b2 = at(2);
  if (b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE))) {
    return 0x2000 + (b2 - 0x80);  // U+200E, U+200F, U+202A-U+202E
  }
  if (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) return 0x2040 + (b2 - 0x80);  // U+2066-U+2069
  return 0;
}

std::string EscapeControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[++i]));
      out += buf;
    } else if (const uint32_t bidi = BidiControlAt(text, i)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", bidi);
      out += buf;
      i += BidiControlLength(bidi) - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string EchoSafe(std::string_view text, size_t max_bytes) {
  std::string out;
  char buf[8];
  size_t i = 0;
  for (; i < text.size() && out.size() < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

}  // namespace hubwatch
