#include "tracker/diff/json_text.h"

#include <string>

#include "estimator/base/json_nesting.h"

namespace hubwatch::diff {
namespace {

std::string DumpScalar(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Appends a rendering of value to out, stopping once out is longer than budget.
void Render(const nlohmann::json& value, size_t budget, std::string& out) {
  if (out.size() > budget) return;
  if (value.is_array()) {
    out += '[';
    bool first = true;
    for (const nlohmann::json& element : value) {
      if (!first) out += ", ";
      first = false;
      Render(element, budget, out);
      if (out.size() > budget) return;
    }
    out += ']';
  } else if (value.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!first) out += ", ";
      first = false;
      out += DumpScalar(nlohmann::json(it.key()));
      out += ": ";
      Render(it.value(), budget, out);
      if (out.size() > budget) return;
    }
    out += '}';
  } else {
    out += DumpScalar(value);
  }
}

// A copy of value, spending `budget` on the JSON text it takes: members are copied while the
// budget lasts, so one member can overspend it by one cut string.
nlohmann::json Capped(const nlohmann::json& value, size_t& budget, bool& truncated) {
  auto spend = [&](size_t bytes) { budget = bytes >= budget ? 0 : budget - bytes; };
  auto cut = [&](const std::string& text) {
    if (text.size() <= kMaxCappedStringBytes) return text;
    truncated = true;
    return CutText(SanitizeUtf8(std::string_view(text).substr(0, kMaxCappedStringBytes + 4)),
                   kMaxCappedStringBytes);
  };
  if (value.is_array() || value.is_object()) {
    nlohmann::json out = value.is_array() ? nlohmann::json::array() : nlohmann::json::object();
    spend(2);
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (budget == 0) {
        truncated = true;
        break;
      }
      spend(1);
      if (value.is_array()) {
        out.push_back(Capped(*it, budget, truncated));
      } else {
        const std::string key = cut(it.key());
        spend(key.size() + 3);
        out[key] = Capped(*it, budget, truncated);
      }
    }
    return out;
  }
  if (value.is_string()) {
    nlohmann::json out = cut(value.get_ref<const std::string&>());
    spend(out.get_ref<const std::string&>().size() + 2);
    return out;
  }
  spend(DumpScalar(value).size());
  return value;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string UnescapePointerToken(std::string_view token) {
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out += token[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      out += token[i];
    }
  }
  return out;
}

}  // namespace

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      out += text[i++];
      continue;
    }
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string OneLine(std::string_view text) {
  const std::string valid = SanitizeUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (char c : valid) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7F) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

std::string CutText(std::string text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  text.resize(max_chars > 3 ? max_chars - 3 : 0);
  // Do not leave half a UTF-8 sequence before the ellipsis.
  size_t lead = text.size();
  while (lead > 0 && (static_cast<unsigned char>(text[lead - 1]) & 0xC0) == 0x80) --lead;
  if (lead > 0) {
    const auto byte = static_cast<unsigned char>(text[lead - 1]);
    const size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
    if (lead - 1 + length > text.size()) text.resize(lead - 1);
  }
  return text + "...";
}

Result<nlohmann::json> ParseJson(std::string_view text) {
  if (JsonNestsDeeperThan(text, kMaxJsonDepth)) {
    return Error::InvalidInput("JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                               " levels");
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string message = e.what();
    const size_t bracket = message.find("] ");
    if (bracket != std::string::npos) message = message.substr(bracket + 2);
    return Error::InvalidInput("invalid JSON: " + SanitizeUtf8(message));
  }
}

std::string ShortJson(const nlohmann::json& value, size_t max_chars) {
  std::string out;
  Render(value, max_chars, out);
  return CutText(std::move(out), max_chars);
}

nlohmann::json CapJson(const nlohmann::json& value, size_t max_bytes, bool* truncated) {
  size_t budget = max_bytes;
  bool cut = false;
  nlohmann::json out = Capped(value, budget, cut);
  if (cut) *truncated = true;
  return out;
}

void CappedList::Add(const nlohmann::json& item) {
  if (count_ == 0) first_ = item;
  if (count_++ >= max_items_) return;
  bool cut = false;
  if (!item.is_object()) {
    items_.push_back(CapJson(item, max_member_bytes_, &cut));
    return;
  }
  nlohmann::json out = nlohmann::json::object();
  for (auto it = item.begin(); it != item.end(); ++it) {
    out[CutText(it.key(), kMaxCappedStringBytes)] = CapJson(*it, max_member_bytes_, &cut);
  }
  items_.push_back(std::move(out));
}

nlohmann::json ListsJson(
    std::initializer_list<std::pair<std::string_view, const CappedList*>> lists) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, list] : lists) {
    out[std::string(name)] = list->items();
    out[std::string(name) + "_count"] = list->count();
  }
  return out;
}

std::string DisplayPointer(std::string_view pointer) {
  if (pointer.empty()) return "(root)";
  std::string out;
  size_t pos = 1;  // skip the leading '/'
  while (pos <= pointer.size()) {
    size_t next = pointer.find('/', pos);
    if (next == std::string_view::npos) next = pointer.size();
    const std::string token = UnescapePointerToken(pointer.substr(pos, next - pos));
    if (!out.empty() && AllDigits(token)) {
      out += '[' + token + ']';
    } else {
      if (!out.empty()) out += '.';
      out += token;
    }
    pos = next + 1;
  }
  return out;
}

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string JoinSummary(const std::vector<std::string>& raw_parts, size_t max_chars) {
  std::vector<std::string> parts;
  parts.reserve(raw_parts.size());
  for (const std::string& part : raw_parts) parts.push_back(OneLine(part));
  std::string out;
  size_t used = 0;
  for (const std::string& part : parts) {
    const size_t extra = (out.empty() ? 0 : 2) + part.size();
    if (!out.empty() && out.size() + extra > max_chars) break;
    if (!out.empty()) out += "; ";
    out += part;
    ++used;
  }
  if (used == 1) out = CutText(std::move(out), max_chars);
  if (used < parts.size()) out += "; +" + std::to_string(parts.size() - used) + " more";
  return out;
}

}  // namespace hubwatch::diff
