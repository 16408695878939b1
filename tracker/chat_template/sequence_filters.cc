// The filters over sequences that do more than one call: join, unique, sort (and the ordering
// and attribute paths it shares with dictsort and map), selectattr and rejectattr.

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tracker/chat_template/filters_internal.h"
#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/js_number.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {
namespace {

// SameValueZero, the equality of a JavaScript Set.
bool SameValueZero(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number() && std::isnan(a.number()) && std::isnan(b.number()))
    return true;
  return StrictEquals(a, b);
}

}  // namespace

namespace filters_internal {

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

Value UniqueItems(const Array& items) {
  Array unique;
  for (const Value& item : items) {
    const bool seen = std::any_of(unique.begin(), unique.end(),
                                  [&](const Value& u) { return SameValueZero(u, item); });
    if (!seen) unique.push_back(item);
  }
  return Value::MakeArray(std::move(unique));
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

}  // namespace filters_internal

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
