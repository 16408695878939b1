// Filters, as @huggingface/jinja's applyFilter dispatches them: by name and by the operand's
// type, bare (`x | length`) or called (`x | join(", ")`), plus the `count` and `escape` filters
// (see DIVERGENCES in template.h). The filters with more to them are in sequence_filters.cc and
// text_filters.cc; the tests of `is`, in jinja_tests.cc.

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tracker/chat_template/filters_internal.h"
#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/js_number.h"
#include "tracker/chat_template/json_value.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {
namespace {

using filters_internal::HtmlEscape;
using filters_internal::IndentFilter;
using filters_internal::JoinRaw;
using filters_internal::SelectAttr;
using filters_internal::SortArray;
using filters_internal::ToJsonFilter;
using filters_internal::UniqueItems;

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
    if (name == "unique") return UniqueItems(items);
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

}  // namespace hubwatch::chat_template
