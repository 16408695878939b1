// The global functions of a render (namespace, range, raise_exception, strftime_now) and the
// global constants (true / false / none in both spellings), as @huggingface/jinja defines them.

#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template {
namespace {

enum class Global { kNamespace, kRange, kRaiseException, kStrftimeNow };

Value MakeNamespace(Interpreter& in, std::vector<Value>& args, SourcePos pos) {
  std::vector<Value> positional = args;
  Object keyword;
  if (!positional.empty() && positional.back().is(ValueKind::kKeywordArguments)) {
    keyword = positional.back().object();
    positional.pop_back();
  }
  if (positional.size() > 1) return in.Fail(pos, "namespace() takes at most 1 positional argument");
  Object entries;
  if (positional.size() == 1) {
    const Value& source = positional[0];
    if (source.is_object_like()) {
      for (const auto& [key, value] : source.object().entries()) entries.Set(key, value);
    } else if (source.is_array_like()) {
      for (const Value& pair : source.array()) {
        std::vector<Value> kv;
        if (pair.is_array_like()) kv = pair.array();
        if (pair.is_string()) {
          for (std::string_view c : text::CodePoints(pair.str()))
            kv.push_back(Value::String(std::string(c)));
        }
        if (kv.size() != 2)
          return in.Fail(pos, "namespace() expects an object or [key, value] pairs");
        if (!kv[0].is_string()) return in.Fail(pos, "namespace() keys must be strings");
        entries.Set(kv[0].str(), kv[1]);
      }
    } else {
      return in.Fail(
          pos, "namespace(): '" + std::string(source.TypeName()) + "' object is not iterable");
    }
  }
  for (const auto& [key, value] : keyword.entries()) entries.Set(key, value);
  Value ns = Value::MakeNamespace(std::move(entries));
  in.TrackNamespace(ns);
  return ns;
}

Value Range(Interpreter& in, std::vector<Value>& args, SourcePos pos) {
  for (const Value& arg : args) {
    if (!arg.is_number())
      return in.Fail(pos, "range() arguments must be numbers, got " + std::string(arg.TypeName()));
  }
  if (args.empty()) return Value::MakeArray({});
  double start = 0;
  double stop = args[0].number();
  if (args.size() >= 2) {
    start = args[0].number();
    stop = args[1].number();
  }
  const double step = args.size() >= 3 ? args[2].number() : 1;
  if (step == 0) return in.Fail(pos, "range() step must not be zero");
  const double count = std::ceil((stop - start) / step);
  if (count > static_cast<double>(in.options().limits.max_loop_iterations)) {
    return in.Fail(pos,
                   "range() would have more than " +
                       std::to_string(in.options().limits.max_loop_iterations) + " items",
                   ErrorCode::kOverflow);
  }
  Array items;
  for (double i = start; step > 0 ? i < stop : i > stop; i += step) {
    items.push_back(std::trunc(i) == i ? Value::Integer(i) : Value::Float(i));
  }
  return Value::MakeArray(std::move(items));
}

std::string Pad2(int n) { return (n < 10 ? "0" : "") + std::to_string(n); }

// The reference's minimal strftime: %Y %m %d %b %B %H %M %%; anything else stays as is.
std::string Strftime(const CivilTime& t, std::string_view format) {
  static constexpr const char* kMonths[] = {"January",   "February", "March",    "April",
                                            "May",       "June",     "July",     "August",
                                            "September", "October",  "November", "December"};
  const int month = t.month >= 1 && t.month <= 12 ? t.month : 1;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      out.push_back(format[i]);
      continue;
    }
    const char spec = format[i + 1];
    switch (spec) {
      case 'Y':
        out += std::to_string(t.year);
        break;
      case 'm':
        out += Pad2(month);
        break;
      case 'd':
        out += Pad2(t.day);
        break;
      case 'b':
        out += std::string(kMonths[month - 1]).substr(0, 3);
        break;
      case 'B':
        out += kMonths[month - 1];
        break;
      case 'H':
        out += Pad2(t.hour);
        break;
      case 'M':
        out += Pad2(t.minute);
        break;
      case '%':
        out += '%';
        break;
      default:
        out.push_back('%');
        continue;
    }
    ++i;
  }
  return out;
}

class GlobalFunction : public Function {
 public:
  explicit GlobalFunction(Global which) : which_(which) {}
  Value Call(Interpreter& in, std::vector<Value>& args, const ScopePtr&,
             SourcePos at) const override {
    switch (which_) {
      case Global::kNamespace:
        return MakeNamespace(in, args, at);
      case Global::kRange:
        return Range(in, args, at);
      case Global::kRaiseException: {
        std::string message;
        if (!args.empty() && !args[0].is_undefined()) ToRawString(args[0], message, nullptr);
        return in.Fail(at, "raise_exception: " + message);
      }
      case Global::kStrftimeNow:
        if (args.empty() || !args[0].is_string())
          return in.Fail(at, "strftime_now(): the format must be a string");
        return Value::String(Strftime(in.options().now, args[0].str()));
    }
    return Value();
  }

 private:
  Global which_;
};

}  // namespace

void DefineGlobals(Scope& globals) {
  globals.Set("namespace",
              Value::MakeFunction(std::make_shared<GlobalFunction>(Global::kNamespace)));
  globals.Set("false", Value::Boolean(false));
  globals.Set("true", Value::Boolean(true));
  globals.Set("none", Value::Null());
  globals.Set("raise_exception",
              Value::MakeFunction(std::make_shared<GlobalFunction>(Global::kRaiseException)));
  globals.Set("range", Value::MakeFunction(std::make_shared<GlobalFunction>(Global::kRange)));
  globals.Set("strftime_now",
              Value::MakeFunction(std::make_shared<GlobalFunction>(Global::kStrftimeNow)));
  globals.Set("True", Value::Boolean(true));
  globals.Set("False", Value::Boolean(false));
  globals.Set("None", Value::Null());
}

}  // namespace hubwatch::chat_template
