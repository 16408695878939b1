// Builtin methods of strings and objects ('abc'.strip(), d.items()) and the `length` of strings
// and arrays, as @huggingface/jinja implements them. The global functions are in globals.cc.

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {
namespace {

bool IsStringMethod(std::string_view name) {
  return name == "upper" || name == "lower" || name == "strip" || name == "title" ||
         name == "capitalize" || name == "rstrip" || name == "lstrip" || name == "startswith" ||
         name == "endswith" || name == "split" || name == "replace";
}

bool IsObjectMethod(std::string_view name) {
  return name == "get" || name == "items" || name == "keys" || name == "values" ||
         name == "dictsort";
}

class BoundMethod : public Function {
 public:
  BoundMethod(Value receiver, std::string_view name)
      : receiver_(std::move(receiver)), name_(name) {}
  Value Call(Interpreter& in, std::vector<Value>& args, const ScopePtr&,
             SourcePos at) const override {
    return CallBuiltin(in, receiver_, name_, args, at);
  }

 private:
  Value receiver_;
  std::string name_;
};

// /\b\w/g -> upper case, with \w = [A-Za-z0-9_].
std::string TitleCase(std::string_view s) {
  std::string out(s);
  bool previous_word = false;
  for (char& c : out) {
    const bool word = text::IsAsciiWord(static_cast<unsigned char>(c));
    if (word && !previous_word && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    previous_word = word;
  }
  return out;
}

// charAt(0).toUpperCase() + slice(1): only the first character changes.
std::string Capitalize(std::string_view s) {
  std::string out(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z')
    out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

// Python's str.split as the reference implements it.
Value Split(Interpreter& in, const std::string& s, const std::vector<Value>& args, SourcePos pos) {
  const Value separator = args.size() > 0 ? args[0] : Value::Null();
  if (!separator.is_string() && !separator.is_null()) {
    return in.Fail(pos, "method 'split': the separator must be a string or none");
  }
  const Value maxsplit_value = args.size() > 1 ? args[1] : Value::Integer(-1);
  if (!maxsplit_value.is(ValueKind::kInteger))
    return in.Fail(pos, "method 'split': maxsplit must be an integer");
  const double maxsplit = maxsplit_value.number();
  std::vector<std::string> parts;
  if (separator.is_null()) {
    const std::string_view rest = text::TrimStart(s);
    size_t i = 0;
    while (i < rest.size()) {
      // Skip whitespace, then take a run of non-whitespace.
      size_t next = i;
      if (text::IsJsWhitespace(text::DecodeUtf8(rest, next))) {
        i = next;
        continue;
      }
      const size_t start = i;
      while (i < rest.size()) {
        next = i;
        if (text::IsJsWhitespace(text::DecodeUtf8(rest, next))) break;
        i = next;
      }
      if (maxsplit >= 0 && static_cast<double>(parts.size()) >= maxsplit) {
        parts.emplace_back(rest.substr(start));
        break;
      }
      parts.emplace_back(rest.substr(start, i - start));
    }
  } else {
    const std::string& sep = separator.str();
    if (sep.empty()) return in.Fail(pos, "method 'split': empty separator");
    size_t start = 0;
    while (true) {
      const size_t found = s.find(sep, start);
      if (found == std::string::npos) break;
      parts.push_back(s.substr(start, found - start));
      start = found + sep.size();
    }
    parts.push_back(s.substr(start));
    if (maxsplit >= 0 && static_cast<double>(parts.size()) > maxsplit) {
      const size_t keep = static_cast<size_t>(maxsplit);
      std::string tail;
      for (size_t i = keep; i < parts.size(); ++i) {
        if (i > keep) tail += sep;
        tail += parts[i];
      }
      parts.resize(keep);
      parts.push_back(std::move(tail));
    }
  }
  if (!in.CheckSize(parts.size(), pos)) return Value();
  Array items;
  items.reserve(parts.size());
  for (std::string& part : parts) items.push_back(Value::String(std::move(part)));
  return Value::MakeArray(std::move(items));
}

Value Replace(Interpreter& in, const std::string& s, const std::vector<Value>& args,
              SourcePos pos) {
  if (args.size() < 2) return in.Fail(pos, "method 'replace': needs at least two arguments");
  if (!args[0].is_string() || !args[1].is_string()) {
    return in.Fail(pos, "method 'replace': the arguments must be strings");
  }
  Value count = Value::Null();
  if (args.size() > 2) {
    if (args[2].is(ValueKind::kKeywordArguments)) {
      const Value* keyword = args[2].object().Find("count");
      count = keyword ? *keyword : Value::Null();
    } else {
      count = args[2];
    }
  }
  if (!count.is(ValueKind::kInteger) && !count.is_null()) {
    return in.Fail(pos, "method 'replace': count must be an integer or none");
  }
  if (count.is(ValueKind::kInteger) && count.number() == 0) return Value::String(s);
  double remaining = count.is_null() || count.number() < 0 ? std::numeric_limits<double>::infinity()
                                                           : count.number();
  const std::string& from = args[0].str();
  const std::string& to = args[1].str();
  std::string out;
  if (from.empty()) {
    // An empty pattern matches before every code point and at the end.
    for (size_t i = 0; i <= s.size();) {
      if (remaining > 0) {
        out += to;
        --remaining;
      }
      if (i == s.size()) break;
      const size_t start = i;
      text::DecodeUtf8(s, i);
      out.append(s, start, i - start);
      if (!in.CheckSize(out.size(), pos)) return Value();
    }
    return Value::String(std::move(out));
  }
  size_t start = 0;
  while (remaining > 0) {
    const size_t found = s.find(from, start);
    if (found == std::string::npos) break;
    out.append(s, start, found - start);
    out += to;
    start = found + from.size();
    --remaining;
    if (!in.CheckSize(out.size(), pos)) return Value();
  }
  out.append(s, start, std::string::npos);
  if (!in.CheckSize(out.size(), pos)) return Value();
  return Value::String(std::move(out));
}

Value AffixTest(Interpreter& in, const std::string& s, const std::vector<Value>& args,
                std::string_view name, SourcePos pos) {
  const auto matches = [&](const std::string& affix) {
    if (affix.size() > s.size()) return false;
    return name == "startswith" ? s.compare(0, affix.size(), affix) == 0
                                : s.compare(s.size() - affix.size(), affix.size(), affix) == 0;
  };
  if (args.empty()) return in.Fail(pos, "method '" + std::string(name) + "': needs an argument");
  if (args[0].is_string()) return Value::Boolean(matches(args[0].str()));
  if (args[0].is_array_like()) {
    for (const Value& item : args[0].array()) {
      if (!item.is_string()) {
        return in.Fail(pos, "method '" + std::string(name) + "': tuple elements must be strings");
      }
      if (matches(item.str())) return Value::Boolean(true);
    }
    return Value::Boolean(false);
  }
  return in.Fail(pos, "method '" + std::string(name) +
                          "': the argument must be a string or a tuple of strings");
}

Value StringMethod(Interpreter& in, const std::string& s, std::string_view name,
                   std::vector<Value>& args, SourcePos pos) {
  if (name == "upper") return Value::String(text::AsciiUpper(s));
  if (name == "lower") return Value::String(text::AsciiLower(s));
  if (name == "strip") return Value::String(std::string(text::Trim(s)));
  if (name == "lstrip") return Value::String(std::string(text::TrimStart(s)));
  if (name == "rstrip") return Value::String(std::string(text::TrimEnd(s)));
  if (name == "title") return Value::String(TitleCase(s));
  if (name == "capitalize") return Value::String(Capitalize(s));
  if (name == "startswith" || name == "endswith") return AffixTest(in, s, args, name, pos);
  if (name == "split") return Split(in, s, args, pos);
  return Replace(in, s, args, pos);
}

Value DictSort(Interpreter& in, const Object& object, std::vector<Value>& args, SourcePos pos) {
  std::vector<Value> positional;
  Object keyword;
  for (const Value& arg : args) {
    if (arg.is(ValueKind::kKeywordArguments)) {
      keyword = arg.object();
    } else {
      positional.push_back(arg);
    }
  }
  const auto argument = [&](size_t i, std::string_view name, Value fallback) {
    if (i < positional.size()) return positional[i];
    const Value* v = keyword.Find(name);
    return v ? *v : fallback;
  };
  const Value case_sensitive = argument(0, "case_sensitive", Value::Boolean(false));
  const Value by = argument(1, "by", Value::String("key"));
  const Value reverse = argument(2, "reverse", Value::Boolean(false));
  if (!case_sensitive.is(ValueKind::kBoolean) || !reverse.is(ValueKind::kBoolean)) {
    return in.Fail(pos, "dictsort: case_sensitive and reverse must be booleans");
  }
  if (!by.is_string() || (by.str() != "key" && by.str() != "value")) {
    return in.Fail(pos, "dictsort: by must be 'key' or 'value'");
  }
  std::vector<std::pair<Value, Value>> entries;
  for (const auto& [key, value] : object.entries()) entries.emplace_back(Value::String(key), value);
  const bool by_key = by.str() == "key";
  std::stable_sort(entries.begin(), entries.end(), [&](const auto& x, const auto& y) {
    if (in.failed()) return false;
    const int c = CompareForSort(in, by_key ? x.first : x.second, by_key ? y.first : y.second,
                                 case_sensitive.boolean(), pos);
    return reverse.boolean() ? c > 0 : c < 0;
  });
  if (in.failed()) return Value();
  Array items;
  for (auto& [key, value] : entries)
    items.push_back(Value::MakeArray({std::move(key), std::move(value)}));
  return Value::MakeArray(std::move(items));
}

Value ObjectMethod(Interpreter& in, const Object& object, std::string_view name,
                   std::vector<Value>& args, SourcePos pos) {
  if (name == "get") {
    if (args.empty() || !args[0].is_string())
      return in.Fail(pos, "method 'get': the key must be a string");
    if (const Value* found = object.Find(args[0].str())) return *found;
    return args.size() > 1 ? args[1] : Value::Null();
  }
  if (name == "dictsort") return DictSort(in, object, args, pos);
  Array items;
  items.reserve(object.size());
  for (const auto& [key, value] : object.entries()) {
    if (name == "items") items.push_back(Value::MakeArray({Value::String(key), value}));
    if (name == "keys") items.push_back(Value::String(key));
    if (name == "values") items.push_back(value);
  }
  return Value::MakeArray(std::move(items));
}

}  // namespace

Value LookupBuiltin(const Value& object, std::string_view name) {
  if (object.is_string()) {
    if (name == "length")
      return Value::Integer(static_cast<double>(text::Utf16Length(object.str())));
    if (IsStringMethod(name))
      return Value::MakeFunction(std::make_shared<BoundMethod>(object, name));
  } else if (object.is_array_like()) {
    if (name == "length") return Value::Integer(static_cast<double>(object.array().size()));
  } else if (object.is_object_like()) {
    if (IsObjectMethod(name))
      return Value::MakeFunction(std::make_shared<BoundMethod>(object, name));
  }
  return Value();
}

Value CallBuiltin(Interpreter& in, const Value& receiver, std::string_view name,
                  std::vector<Value>& args, SourcePos pos) {
  if (receiver.is_string()) return StringMethod(in, receiver.str(), name, args, pos);
  return ObjectMethod(in, receiver.object(), name, args, pos);
}

}  // namespace hubwatch::chat_template
