// The filters that format text: tojson (with its keyword options), indent, and escape.

#include <algorithm>
#include <string>
#include <utility>

#include "tracker/chat_template/filters_internal.h"
#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/json_value.h"

namespace hubwatch::chat_template::filters_internal {

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

Value ToJsonFilter(Interpreter& in, const Value& operand, const Object& keyword, SourcePos pos) {
  JsonFormat format;
  const Value* indent = keyword.Find("indent");
  if (indent && !indent->is_null()) {
    if (!indent->is(ValueKind::kInteger))
      return in.Fail(pos, "filter 'tojson': indent must be an integer");
    if (indent->number() < 0) return in.Fail(pos, "filter 'tojson': indent must not be negative");
    format.indent = static_cast<int>(std::min(indent->number(), 1024.0));
  }
  for (std::string_view flag : {"ensure_ascii", "sort_keys"}) {
    const Value* v = keyword.Find(flag);
    if (!v) continue;
    if (!v->is(ValueKind::kBoolean)) {
      return in.Fail(pos, "filter 'tojson': " + std::string(flag) + " must be a boolean");
    }
    (flag == "ensure_ascii" ? format.ensure_ascii : format.sort_keys) = v->boolean();
  }
  if (const Value* separators = keyword.Find("separators"); separators && !separators->is_null()) {
    if (!separators->is_array_like() || separators->array().size() != 2 ||
        !separators->array()[0].is_string() || !separators->array()[1].is_string()) {
      return in.Fail(pos, "filter 'tojson': separators must be a tuple of two strings");
    }
    format.custom_separators = true;
    format.item_separator = separators->array()[0].str();
    format.key_separator = separators->array()[1].str();
  }
  std::string out;
  std::string error;
  if (!ToJson(operand, format, out, &error)) return in.Fail(pos, "filter 'tojson': " + error);
  if (!in.CheckSize(out.size(), pos)) return Value();
  return Value::String(std::move(out));
}

Value IndentFilter(Interpreter& in, const std::string& s, const Value& width, bool first,
                   bool blank, SourcePos pos) {
  std::string prefix;
  if (width.is_string()) {
    prefix = width.str();
  } else if (width.is(ValueKind::kInteger)) {
    prefix.assign(static_cast<size_t>(std::clamp(width.number(), 0.0, 4096.0)), ' ');
  } else {
    return in.Fail(pos, "filter 'indent': width must be an integer or a string");
  }
  std::string out;
  size_t line_start = 0;
  for (size_t line = 0;; ++line) {
    const size_t end = s.find('\n', line_start);
    const std::string_view text = std::string_view(s).substr(
        line_start, end == std::string::npos ? std::string::npos : end - line_start);
    const bool skip = (!first && line == 0) || (!blank && text.empty());
    if (!skip) out += prefix;
    out += text;
    if (!in.CheckSize(out.size(), pos)) return Value();
    if (end == std::string::npos) break;
    out.push_back('\n');
    line_start = end + 1;
  }
  return Value::String(std::move(out));
}

}  // namespace hubwatch::chat_template::filters_internal
