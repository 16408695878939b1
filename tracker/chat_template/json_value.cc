#include "tracker/chat_template/json_value.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "tracker/chat_template/js_number.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {
namespace {

constexpr int kMaxDepth = 512;

void AppendHex4(std::string& out, unsigned unit) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(unit >> shift) & 0xF]);
}

// JSON.stringify(string), optionally followed by the ensure_ascii replacement of every UTF-16
// code unit in [0x7F, 0xFFFF] by \uXXXX.
void AppendJsonString(std::string& out, std::string_view s, bool ensure_ascii) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t cp = text::DecodeUtf8(s, i);
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (cp < 0x20) {
      AppendHex4(out, static_cast<unsigned>(cp));
    } else if (ensure_ascii && cp >= 0x7F) {
      if (cp >= 0x10000) {
        AppendHex4(out, 0xD800 + ((cp - 0x10000) >> 10));
        AppendHex4(out, 0xDC00 + ((cp - 0x10000) & 0x3FF));
      } else {
        AppendHex4(out, static_cast<unsigned>(cp));
      }
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  out.push_back('"');
}

// An approximation of String.prototype.localeCompare for sort_keys: case-insensitive order,
// lower case first on ties (see DIVERGENCES in template.h).
bool LocaleLess(const std::string& a, const std::string& b) {
  const int folded = text::CompareUtf16(text::AsciiLower(a), text::AsciiLower(b));
  if (folded != 0) return folded < 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) return a[i] > b[i];  // 'a' (0x61) before 'A' (0x41)
  }
  return a.size() < b.size();
}

struct Writer {
  const JsonFormat& format;
  std::string& out;
  std::string* error;

  bool Fail(std::string message) {
    if (error) *error = std::move(message);
    return false;
  }

  void Newline(int depth) {
    out.push_back('\n');
    out.append(static_cast<size_t>(format.indent) * static_cast<size_t>(depth), ' ');
  }

  std::string_view ItemSeparator() const {
    if (format.custom_separators) return format.item_separator;
    return format.indent > 0 ? "," : ", ";
  }
  std::string_view KeySeparator() const {
    return format.custom_separators ? std::string_view(format.key_separator) : ": ";
  }

  bool Write(const Value& v, int depth) {
    if (depth > kMaxDepth) return Fail("value is nested too deeply for JSON");
    switch (v.kind()) {
      case ValueKind::kNull:
        out += "null";
        return true;
      case ValueKind::kUndefined:
        out += format.undefined_as_null ? "null" : "undefined";
        return true;
      case ValueKind::kBoolean:
        out += v.boolean() ? "true" : "false";
        return true;
      case ValueKind::kInteger:
      case ValueKind::kFloat:
        out += std::isfinite(v.number()) ? js::NumberToString(v.number()) : "null";
        return true;
      case ValueKind::kString:
        AppendJsonString(out, v.str(), format.ensure_ascii);
        return true;
      case ValueKind::kArray:
        return WriteArray(v.array(), depth);
      case ValueKind::kObject:
      case ValueKind::kNamespace:
        return WriteObject(v.object(), depth);
      case ValueKind::kTuple:
      case ValueKind::kKeywordArguments:
      case ValueKind::kFunction:
        break;
    }
    return Fail("Cannot convert to JSON: " + std::string(v.TypeName()));
  }

  bool WriteArray(const Array& items, int depth) {
    out.push_back('[');
    const bool pretty = format.indent > 0 && !items.empty();
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out.append(ItemSeparator());
      if (pretty) Newline(depth + 1);
      if (!Write(items[i], depth + 1)) return false;
    }
    if (pretty) Newline(depth);
    out.push_back(']');
    return true;
  }

  bool WriteObject(const Object& object, int depth) {
    std::vector<const std::pair<std::string, Value>*> entries;
    entries.reserve(object.size());
    for (const auto& entry : object.entries()) entries.push_back(&entry);
    if (format.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto* a, const auto* b) { return LocaleLess(a->first, b->first); });
    }
    out.push_back('{');
    const bool pretty = format.indent > 0 && !entries.empty();
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out.append(ItemSeparator());
      if (pretty) Newline(depth + 1);
      AppendJsonString(out, entries[i]->first, format.ensure_ascii);
      out.append(KeySeparator());
      if (!Write(entries[i]->second, depth + 1)) return false;
    }
    if (pretty) Newline(depth);
    out.push_back('}');
    return true;
  }
};

// JavaScript orders "array index" keys (canonical integers below 2^32 - 1) first, ascending.
bool IsArrayIndexKey(std::string_view key, double& index) {
  if (key.empty() || key.size() > 10) return false;
  if (key.size() > 1 && key[0] == '0') return false;
  double value = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value >= 4294967295.0) return false;
  index = value;
  return true;
}

Value FromJsonAt(const nlohmann::ordered_json& json, int depth) {
  if (depth > kMaxDepth) return Value::Null();
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::Null();
    case nlohmann::ordered_json::value_t::boolean:
      return Value::Boolean(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::Integer(static_cast<double>(json.get<int64_t>()));
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value::Integer(static_cast<double>(json.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: {
      const double d = json.get<double>();
      return std::isfinite(d) && std::trunc(d) == d ? Value::Integer(d) : Value::Float(d);
    }
    case nlohmann::ordered_json::value_t::string:
      return Value::String(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      Array items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(FromJsonAt(item, depth + 1));
      return Value::MakeArray(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<double, std::pair<std::string, Value>>> indexed;
      std::vector<std::pair<std::string, Value>> named;
      for (const auto& [key, item] : json.items()) {
        double index = 0;
        if (IsArrayIndexKey(key, index)) {
          indexed.push_back({index, {key, FromJsonAt(item, depth + 1)}});
        } else {
          named.emplace_back(key, FromJsonAt(item, depth + 1));
        }
      }
      std::stable_sort(indexed.begin(), indexed.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      Object object;
      for (auto& [index, entry] : indexed) object.Set(entry.first, std::move(entry.second));
      for (auto& entry : named) object.Set(entry.first, std::move(entry.second));
      return Value::MakeObject(std::move(object));
    }
    case nlohmann::ordered_json::value_t::binary:
    case nlohmann::ordered_json::value_t::discarded:
      break;
  }
  return Value::Null();
}

}  // namespace

bool ToJson(const Value& v, const JsonFormat& format, std::string& out, std::string* error) {
  Writer writer{format, out, error};
  return writer.Write(v, 0);
}

Value FromJson(const nlohmann::ordered_json& json) { return FromJsonAt(json, 0); }

}  // namespace hubwatch::chat_template
