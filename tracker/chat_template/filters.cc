// Filters and tests, as @huggingface/jinja implements them (applyFilter, Environment.TESTS),
// plus the `count` and `escape` filters the issue requires (see DIVERGENCES in template.h).

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/js_number.h"
#include "tracker/chat_template/json_value.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {
namespace {

// Positional argument i, else keyword `name`, else null (absent).
const Value* Argument(const Array& positional, const Object& keyword, size_t i,
                      std::string_view name) {
  if (i < positional.size()) return &positional[i];
  return name.empty() ? nullptr : keyword.Find(name);
}

Value LengthOf(const Value& v) {
  if (v.is_string()) return Value::Integer(static_cast<double>(text::Utf16Length(v.str())));
  if (v.is_array_like()) return Value::Integer(static_cast<double>(v.array().size()));
  return Value::Integer(static_cast<double>(v.object().size()));
}

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

// Array.prototype.join over the underlying values: null and undefined join as "".
bool JoinRaw(Interpreter& in, const Array& items, std::string_view separator, std::string& out,
             SourcePos pos) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.append(separator);
    if (items[i].is_null() || items[i].is_undefined()) continue;
    std::string error;
    if (!ToRawString(items[i], out, &error)) {
      in.Fail(pos, "filter 'join': " + error);
      return false;
    }
    if (!in.CheckSize(out.size(), pos)) return false;
  }
  return true;
}

// SameValueZero, the equality of a JavaScript Set.
bool SameValueZero(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number() && std::isnan(a.number()) && std::isnan(b.number()))
    return true;
  return StrictEquals(a, b);
}

Value SortArray(Interpreter& in, const Array& items, bool reverse, bool case_sensitive,
                const Value* attribute, SourcePos pos) {
  std::vector<std::pair<Value, Value>> keyed;  // (sort key, item)
  keyed.reserve(items.size());
  std::string path;
  if (attribute && attribute->is_string()) path = attribute->str();
  if (attribute && attribute->is(ValueKind::kInteger))
    path = js::NumberToString(attribute->number());
  for (const Value& item : items) {
    keyed.emplace_back(attribute && !attribute->is_null() ? AttributePath(item, path) : item, item);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    if (in.failed()) return false;
    const int c = CompareForSort(in, x.first, y.first, case_sensitive, pos);
    return reverse ? c > 0 : c < 0;
  });
  Array sorted;
  sorted.reserve(keyed.size());
  for (auto& entry : keyed) sorted.push_back(std::move(entry.second));
  return in.failed() ? Value() : Value::MakeArray(std::move(sorted));
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

Value IdentifierFilter(Interpreter& in, const Value& operand, const std::string& name,
                       SourcePos pos) {
  const auto unknown = [&] {
    return in.Fail(pos,
                   "filter '" + name + "': not supported for " + std::string(operand.TypeName()),
                   ErrorCode::kUnsupported);
  };
  if (name == "safe") return operand;
  if (name == "tojson") return ToJsonFilter(in, operand, Object(), pos);
  if (name == "count" &&
      (operand.is_string() || operand.is_array_like() || operand.is_object_like())) {
    return LengthOf(operand);  // divergence: the reference has no `count`
  }
  if (name == "escape") {  // divergence: the reference has no `escape`
    std::string shown;
    std::string error;
    if (!operand.is_undefined() && !ToDisplayString(operand, shown, &error)) {
      return in.Fail(pos, "filter 'escape': " + error);
    }
    return Value::String(HtmlEscape(shown));
  }
  std::vector<Value> no_args;
  if (operand.is_array_like()) {
    const Array& items = operand.array();
    if (name == "list") return operand;
    if (name == "first" || name == "last") {
      if (items.empty()) return in.Fail(pos, "filter '" + name + "': the sequence is empty");
      return name == "first" ? items.front() : items.back();
    }
    if (name == "length") return LengthOf(operand);
    if (name == "reverse") return Value::MakeArray(Array(items.rbegin(), items.rend()));
    if (name == "sort") return SortArray(in, items, false, false, nullptr, pos);
    if (name == "join") {
      std::string out;
      if (!JoinRaw(in, items, "", out, pos)) return Value();
      return Value::String(std::move(out));
    }
    if (name == "string") {
      JsonFormat format;
      format.undefined_as_null = false;
      std::string out;
      std::string error;
      if (!ToJson(operand, format, out, &error)) return in.Fail(pos, "filter 'string': " + error);
      return Value::String(std::move(out));
    }
    if (name == "unique") {
      Array unique;
      for (const Value& item : items) {
        const bool seen = std::any_of(unique.begin(), unique.end(),
                                      [&](const Value& u) { return SameValueZero(u, item); });
        if (!seen) unique.push_back(item);
      }
      return Value::MakeArray(std::move(unique));
    }
    return unknown();
  }
  if (operand.is_string()) {
    const std::string& s = operand.str();
    if (name == "length" || name == "upper" || name == "lower" || name == "title" ||
        name == "capitalize") {
      if (name == "length") return LengthOf(operand);
      return CallBuiltin(in, operand, name, no_args, pos);
    }
    if (name == "trim") return Value::String(std::string(text::Trim(s)));
    if (name == "indent") return IndentFilter(in, s, Value::Integer(4), false, false, pos);
    if (name == "join" || name == "string") return operand;
    if (name == "int") {
      const double v = js::ParseInt(s);
      return Value::Integer(std::isnan(v) ? 0 : v);
    }
    if (name == "float") {
      const double v = js::ParseFloat(s);
      return Value::Float(std::isnan(v) ? 0 : v);
    }
    return unknown();
  }
  if (operand.is_number()) {
    const double v = operand.number();
    if (name == "abs")
      return operand.is(ValueKind::kInteger) ? Value::Integer(std::fabs(v))
                                             : Value::Float(std::fabs(v));
    if (name == "int") return Value::Integer(std::trunc(v) + 0.0);
    if (name == "float") return Value::Float(v);
    if (name == "string") {
      return Value::String(operand.is(ValueKind::kInteger) ? js::NumberToString(v)
                                                           : js::FloatToString(v));
    }
    return unknown();
  }
  if (operand.is_object_like()) {
    if (name == "items") return CallBuiltin(in, operand, "items", no_args, pos);
    if (name == "length") return LengthOf(operand);
    if (LookupBuiltin(operand, name).is(ValueKind::kFunction)) {
      return CallBuiltin(in, operand, name, no_args, pos);
    }
    return unknown();
  }
  if (operand.is(ValueKind::kBoolean)) {
    const bool b = operand.boolean();
    if (name == "bool") return operand;
    if (name == "int") return Value::Integer(b ? 1 : 0);
    if (name == "float") return Value::Float(b ? 1 : 0);
    if (name == "string") return Value::String(b ? "true" : "false");
    return unknown();
  }
  return in.Fail(pos, "filter '" + name + "': cannot apply to " + std::string(operand.TypeName()));
}

Value SelectAttr(Interpreter& in, const Value& operand, const Node& call, bool select,
                 const ScopePtr& scope) {
  const std::string& name = call.a->text;
  for (const Value& item : operand.array()) {
    if (!item.has_entries())
      return in.Fail(call.pos, "filter '" + name + "': items must be objects");
  }
  for (const NodePtr& arg : call.items) {
    if (arg->kind != NodeKind::kStringLiteral) {
      return in.Fail(arg->pos, "filter '" + name + "': arguments must be string literals");
    }
  }
  std::vector<Value> args;
  for (const NodePtr& arg : call.items) args.push_back(in.Evaluate(*arg, scope));
  if (args.empty()) return in.Fail(call.pos, "filter '" + name + "': needs an attribute name");
  const std::string& attribute = args[0].str();
  Array kept;
  for (const Value& item : operand.array()) {
    const Value* value = item.object().Find(attribute);
    bool result = false;
    if (value && args.size() >= 2) {
      if (!RunTest(in, args[1].str(), *value, args.size() >= 3 ? &args[2] : nullptr, call.pos,
                   &result)) {
        return in.Fail(call.pos, "filter '" + name + "': unknown test '" + args[1].str() + "'",
                       ErrorCode::kUnsupported);
      }
      if (in.failed()) return Value();
    } else if (value) {
      result = Truthy(*value);
    }
    if (result == select) kept.push_back(item);
  }
  return Value::MakeArray(std::move(kept));
}

Value CallFilter(Interpreter& in, const Value& operand, const Node& call, const ScopePtr& scope) {
  const std::string& name = call.a->text;
  const SourcePos pos = call.a->pos;
  const auto arguments = [&](Array& positional, Object& keyword) {
    in.EvaluateArguments(call.items, scope, positional, keyword);
    return !in.failed();
  };
  Array positional;
  Object keyword;
  if (name == "tojson") {
    if (!arguments(positional, keyword)) return Value();
    return ToJsonFilter(in, operand, keyword, pos);
  }
  if (name == "join") {
    if (!operand.is_string() && !operand.is_array_like()) {
      return in.Fail(pos, "filter 'join': cannot apply to " + std::string(operand.TypeName()));
    }
    if (!arguments(positional, keyword)) return Value();
    const Value* separator = Argument(positional, keyword, 0, "separator");
    if (separator && !separator->is_string())
      return in.Fail(pos, "filter 'join': separator must be a string");
    const std::string sep = separator ? separator->str() : "";
    std::string out;
    if (operand.is_string()) {
      const std::vector<std::string_view> characters = text::CodePoints(operand.str());
      for (size_t i = 0; i < characters.size(); ++i) {
        if (i > 0) out += sep;
        out.append(characters[i]);
        if (!in.CheckSize(out.size(), pos)) return Value();
      }
    } else if (!JoinRaw(in, operand.array(), sep, out, pos)) {
      return Value();
    }
    return Value::String(std::move(out));
  }
  if (name == "int" || name == "float") {
    if (!arguments(positional, keyword)) return Value();
    const bool to_int = name == "int";
    const Value* fallback = Argument(positional, keyword, 0, "default");
    const Value zero = to_int ? Value::Integer(0) : Value::Float(0);
    if (operand.is_string()) {
      const double v = to_int ? js::ParseInt(operand.str()) : js::ParseFloat(operand.str());
      if (std::isnan(v)) return fallback ? *fallback : zero;
      return to_int ? Value::Integer(v) : Value::Float(v);
    }
    if (operand.is_number()) {
      return to_int ? Value::Integer(std::trunc(operand.number()) + 0.0)
                    : Value::Float(operand.number());
    }
    if (operand.is(ValueKind::kBoolean)) {
      return to_int ? Value::Integer(operand.boolean() ? 1 : 0)
                    : Value::Float(operand.boolean() ? 1 : 0);
    }
    return in.Fail(pos,
                   "filter '" + name + "': cannot apply to " + std::string(operand.TypeName()));
  }
  if (name == "default") {
    if (!arguments(positional, keyword)) return Value();
    const Value fallback = positional.empty() ? Value::String("") : positional[0];
    const Value* boolean = Argument(positional, keyword, 1, "boolean");
    if (boolean && !boolean->is(ValueKind::kBoolean)) {
      return in.Fail(pos, "filter 'default': the boolean flag must be a boolean");
    }
    const bool use_truthiness = boolean && boolean->boolean();
    if (operand.is_undefined() || (use_truthiness && !Truthy(operand))) return fallback;
    return operand;
  }
  if (operand.is_array_like()) {
    if (name == "sort") {
      if (!arguments(positional, keyword)) return Value();
      const Value* reverse = Argument(positional, keyword, 0, "reverse");
      const Value* case_sensitive = Argument(positional, keyword, 1, "case_sensitive");
      const Value* attribute = Argument(positional, keyword, 2, "attribute");
      if ((reverse && !reverse->is(ValueKind::kBoolean)) ||
          (case_sensitive && !case_sensitive->is(ValueKind::kBoolean))) {
        return in.Fail(pos, "filter 'sort': reverse and case_sensitive must be booleans");
      }
      if (attribute && !attribute->is_string() && !attribute->is(ValueKind::kInteger) &&
          !attribute->is_null()) {
        return in.Fail(pos, "filter 'sort': attribute must be a string, an integer or none");
      }
      return SortArray(in, operand.array(), reverse && reverse->boolean(),
                       case_sensitive && case_sensitive->boolean(), attribute, pos);
    }
    if (name == "selectattr" || name == "rejectattr") {
      return SelectAttr(in, operand, call, name == "selectattr", scope);
    }
    if (name == "map") {
      if (!arguments(positional, keyword)) return Value();
      const Value* attribute = keyword.Find("attribute");
      if (!attribute) {
        return in.Fail(pos, "filter 'map': only map(attribute=...) is supported",
                       ErrorCode::kUnsupported);
      }
      if (!attribute->is_string()) return in.Fail(pos, "filter 'map': attribute must be a string");
      const Value* fallback = keyword.Find("default");
      Array mapped;
      for (const Value& item : operand.array()) {
        if (!item.has_entries()) return in.Fail(pos, "filter 'map': items must be objects");
        Value v = AttributePath(item, attribute->str());
        mapped.push_back(v.is_undefined() && fallback ? *fallback : std::move(v));
      }
      return Value::MakeArray(std::move(mapped));
    }
  } else if (operand.is_string()) {
    if (name == "indent") {
      if (!arguments(positional, keyword)) return Value();
      const Value* width = Argument(positional, keyword, 0, "width");
      const Value* first = Argument(positional, keyword, 1, "first");
      const Value* blank = Argument(positional, keyword, 2, "blank");
      return IndentFilter(in, operand.str(), width ? *width : Value::Integer(4),
                          first && RawTruthy(*first), blank && RawTruthy(*blank), pos);
    }
    if (name == "replace") {
      if (!arguments(positional, keyword)) return Value();
      positional.push_back(Value::MakeKeywordArguments(std::move(keyword)));
      return CallBuiltin(in, operand, "replace", positional, pos);
    }
  } else if (operand.is_object_like()) {
    if (LookupBuiltin(operand, name).is(ValueKind::kFunction)) {
      Array args = in.EvaluateCallArguments(call.items, scope);
      if (in.failed()) return Value();
      return CallBuiltin(in, operand, name, args, pos);
    }
  } else {
    return in.Fail(pos,
                   "filter '" + name + "': cannot apply to " + std::string(operand.TypeName()));
  }
  return in.Fail(pos, "filter '" + name + "': not supported for " + std::string(operand.TypeName()),
                 ErrorCode::kUnsupported);
}

}  // namespace

Value ApplyFilter(Interpreter& in, const Value& operand, const Node& filter,
                  const ScopePtr& scope) {
  if (filter.kind == NodeKind::kIdentifier)
    return IdentifierFilter(in, operand, filter.text, filter.pos);
  return CallFilter(in, operand, filter, scope);
}

bool RunTest(Interpreter& in, std::string_view name, const Value& operand, const Value* argument,
             SourcePos pos, bool* result) {
  const ValueKind k = operand.kind();
  std::optional<bool> r;
  if (name == "boolean") r = k == ValueKind::kBoolean;
  if (name == "callable") r = k == ValueKind::kFunction;
  if (name == "odd" || name == "even") {
    r = false;
    if (k != ValueKind::kInteger) {
      in.Fail(pos, "test '" + std::string(name) + "': cannot apply to " +
                       std::string(operand.TypeName()));
    } else {
      const bool odd = std::fmod(operand.number(), 2) != 0;
      r = name == "odd" ? odd : !odd;
    }
  }
  if (name == "false") r = k == ValueKind::kBoolean && !operand.boolean();
  if (name == "true") r = k == ValueKind::kBoolean && operand.boolean();
  if (name == "none") r = k == ValueKind::kNull;
  if (name == "string") r = k == ValueKind::kString;
  if (name == "number") r = operand.is_number();
  if (name == "integer") r = k == ValueKind::kInteger;
  if (name == "iterable") r = k == ValueKind::kArray || k == ValueKind::kString;
  if (name == "mapping") r = operand.is_object_like();
  if (name == "sequence")
    r = operand.is_array_like() || operand.is_object_like() || operand.is_string();
  if (name == "lower") r = operand.is_string() && operand.str() == text::AsciiLower(operand.str());
  if (name == "upper") r = operand.is_string() && operand.str() == text::AsciiUpper(operand.str());
  if (name == "defined") r = k != ValueKind::kUndefined;
  if (name == "undefined") r = k == ValueKind::kUndefined;
  if (name == "equalto" || name == "eq") {
    r = false;
    if (!argument) {
      in.Fail(pos, "test '" + std::string(name) + "': needs a value to compare with");
    } else {
      r = StrictEquals(operand, *argument);
    }
  }
  if (!r) return false;
  *result = *r;
  return true;
}

int CompareForSort(Interpreter& in, const Value& a, const Value& b, bool case_sensitive,
                   SourcePos pos) {
  const auto fail = [&](std::string message) {
    in.Fail(pos, "sort: " + message);
    return 0;
  };
  if (a.is_null() || b.is_null()) {
    if (a.is_null() && b.is_null()) return 0;
    return fail("cannot compare " + std::string(a.TypeName()) + " with " +
                std::string(b.TypeName()));
  }
  if (a.is_undefined() || b.is_undefined()) {
    if (a.is_undefined() && b.is_undefined()) return 0;
    return fail("cannot compare " + std::string(a.TypeName()) + " with " +
                std::string(b.TypeName()));
  }
  const auto numeric = [](const Value& v) { return v.is_number() || v.is(ValueKind::kBoolean); };
  if (numeric(a) && numeric(b))
    return a.number() < b.number() ? -1 : (a.number() > b.number() ? 1 : 0);
  if (a.kind() != b.kind()) {
    return fail("cannot compare different types: " + std::string(a.TypeName()) + " and " +
                std::string(b.TypeName()));
  }
  if (!a.is_string()) return fail("cannot compare " + std::string(a.TypeName()));
  if (case_sensitive) return text::CompareUtf16(a.str(), b.str());
  return text::CompareUtf16(text::AsciiLower(a.str()), text::AsciiLower(b.str()));
}

Value AttributePath(const Value& item, std::string_view path) {
  Value value = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string_view part =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (value.has_entries()) {
      const Value* found = value.object().Find(part);
      value = found ? *found : Value();
    } else if (value.is_array_like()) {
      const double index = js::ParseInt(part);
      if (std::isnan(index) || index < 0 || index >= static_cast<double>(value.array().size()))
        return Value();
      value = value.array()[static_cast<size_t>(index)];
    } else {
      return Value();
    }
    if (dot == std::string_view::npos) return value;
    start = dot + 1;
  }
}

}  // namespace hubwatch::chat_template
