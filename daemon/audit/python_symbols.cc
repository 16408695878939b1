#include "daemon/audit/python_symbols.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace hubwatch::audit {
namespace {

using Kind = PyToken::Kind;
constexpr int kMaxAliasDepth = 8;

// A variable name that says it holds models, and not something about them (a directory, a
// type, keyword arguments).
bool IsModelLikeName(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("model") == std::string::npos) return false;
  static constexpr std::array<std::string_view, 9> kNotAnId = {
      "dir", "file", "output", "save", "type", "kwargs", "cache", "class", "args"};
  for (std::string_view word : kNotAnId) {
    if (lower.find(word) != std::string::npos) return false;
  }
  return true;
}

// Whether tokens [begin, end) hold only literals and brackets: ("org/a", 1), ["x", "y"], ...
bool IsLiteralOnly(const PyTokenView& t, size_t begin, size_t end) {
  for (size_t j = begin; j < end; ++j) {
    std::string_view text = t.Text(j);
    bool ok = (t[j].kind == Kind::kString && !t[j].f_string) || t[j].kind == Kind::kNumber ||
              t.IsName(j, "None") || t.IsName(j, "True") || t.IsName(j, "False") ||
              (t[j].kind == Kind::kOp && text.size() == 1 &&
               std::string_view("()[]{},:").find(text) != std::string_view::npos);
    if (!ok) return false;
  }
  return begin < end;
}

}  // namespace

PythonSymbols::PythonSymbols(std::string_view source, const std::vector<PyToken>& tokens)
    : view_(source, tokens) {
  ReadStatements();
  for (size_t i = 1; i + 1 < view_.size(); ++i) {
    if (view_.IsName(i, "add_argument") && view_.IsOp(i + 1, "(") && view_.IsOp(i - 1, ".")) {
      ArgparseOption option = ReadArgparseOption(view_, i + 1);
      if (option.default_name != 0 && !view_.IsName(option.default_name, "None")) {
        option.value = ResolveName(view_.Text(option.default_name), option.default_name, 1);
      }
      if (!option.dest.empty()) attributes_[option.dest] = std::move(option.value);
    } else if (view_[i].kind == Kind::kName && view_.IsOp(i + 1, "(") && !view_.IsOp(i - 1, ".") &&
               !view_.IsName(i - 1, "def")) {
      calls_[std::string(view_.Text(i))].push_back(i + 1);
    }
  }
}

void PythonSymbols::ReadStatements() {
  const PyTokenView& t = view_;
  size_t i = 0;
  while (i < t.size()) {
    size_t end = i;
    while (end < t.size() && t[end].kind != Kind::kNewline) ++end;
    if (t.IsName(i, "def") || (t.IsName(i, "async") && t.IsName(i + 1, "def"))) {
      ReadParameters(t.IsName(i, "def") ? i : i + 1);
    } else if (t[i].kind == Kind::kName && i + 1 < end) {
      if (t.IsOp(i + 1, "=")) {
        ReadAssignment(i, i + 1, end);
      } else if (t.IsOp(i + 1, ":")) {  // annotated: NAME: T = expr
        for (size_t j = i + 2; j < end; j = t.IsOpening(j) ? t.MatchingBracket(j) + 1 : j + 1) {
          if (t.IsOp(j, "=")) {
            ReadAssignment(i, j, end);
            break;
          }
        }
      }
    }
    i = end + 1;
  }
}

SourceValue PythonSymbols::FieldDefault(size_t name, size_t open, size_t end) const {
  const PyTokenView& t = view_;
  size_t close = std::min(t.MatchingBracket(open), end);
  for (size_t j = open + 1; j < close; ++j) {
    size_t item_end = t.ItemEnd(j, close);
    if (t.IsName(j, "default") && t.IsOp(j + 1, "=")) return LiteralExpression(t, j + 2, item_end);
    j = item_end;
  }
  return SourceValue::Computed("dataclass field " + QuoteSource(t.Text(name)) +
                               ", set on the command line");
}

void PythonSymbols::ReadAssignment(size_t name, size_t eq, size_t end) {
  const PyTokenView& t = view_;
  Assignment a;
  a.position = name;
  a.model_like = IsModelLikeName(t.Text(name));
  size_t begin = eq + 1;
  if (begin + 1 == end && t[begin].kind == Kind::kName && !t.IsName(begin, "None")) {
    a.alias = std::string(t.Text(begin));
  } else if (t.IsName(begin, "field") && t.IsOp(begin + 1, "(")) {
    a.value = FieldDefault(name, begin + 1, end);
  } else {
    a.value = LiteralExpression(t, begin, end);
  }
  if (IsLiteralOnly(t, begin, end)) {
    for (size_t j = begin; j < end; ++j) {
      if (t[j].kind == Kind::kString) a.literals.push_back(j);
    }
  }
  if (eq > name + 1) attributes_[std::string(t.Text(name))] = a.value;  // annotated: a field
  assignments_[std::string(t.Text(name))].push_back(std::move(a));
}

void PythonSymbols::ReadParameters(size_t def) {
  const PyTokenView& t = view_;
  if (!t.IsOp(def + 2, "(")) return;
  std::string function(t.Text(def + 1));
  size_t close = t.MatchingBracket(def + 2);
  // A method's calls go through an object (x.f(...)), so only plain functions take values from
  // their calls.
  bool plain = !t.IsName(def + 3, "self") && !t.IsName(def + 3, "cls");
  int index = 0;  // -1 once past `*` or `*args`: keyword only
  for (size_t j = def + 3; j < close; ++j) {
    if (t.IsOp(j, "/")) {
      j = t.ItemEnd(j, close);
      continue;
    }
    if (t.IsOp(j, "*") || t.IsOp(j, "**")) index = -1;
    while (j < close && (t.IsOp(j, "*") || t.IsOp(j, "**"))) ++j;
    size_t name = j;
    size_t end = t.ItemEnd(j, close);
    size_t eq = name;
    while (eq < end && !t.IsOp(eq, "=")) eq = t.IsOpening(eq) ? t.MatchingBracket(eq) + 1 : eq + 1;
    if (name < close && t[name].kind == Kind::kName) {
      Assignment a;
      a.position = name;
      a.self_described = eq >= end;
      if (eq + 2 == end && t[eq + 1].kind == Kind::kName && !t.IsName(eq + 1, "None")) {
        a.alias = std::string(t.Text(eq + 1));  // def f(model=DEFAULT_MODEL)
      }
      a.value = eq >= end ? SourceValue::Computed("parameter " + QuoteSource(t.Text(name)) +
                                                  " of " + QuoteSource(function) + "()")
                          : LiteralExpression(t, eq + 1, end);
      if (eq >= end && plain) {
        a.function = function;
        a.parameter_index = index;
      }
      assignments_[std::string(t.Text(name))].push_back(std::move(a));
    }
    if (index >= 0) ++index;
    j = end;
  }
}

SourceValue PythonSymbols::EvaluateAt(size_t begin, size_t end, size_t use, int depth) {
  const PyTokenView& t = view_;
  if (end == begin + 1 && t[begin].kind == Kind::kName && !t.IsName(begin, "None")) {
    if (depth >= kMaxAliasDepth) return SourceValue::Computed("variable " + t.Quoted(begin, end));
    return ResolveName(t.Text(begin), use, depth + 1);
  }
  bool dotted = end > begin && (end - begin) % 2 == 1;
  for (size_t j = begin; j < end && dotted; ++j) {
    dotted = (j - begin) % 2 == 0 ? t[j].kind == Kind::kName : t.IsOp(j, ".");
  }
  if (!dotted) return LiteralExpression(t, begin, end);
  auto it = attributes_.find(std::string(t.Text(end - 1)));
  if (it == attributes_.end()) {
    return SourceValue::Computed("attribute " + t.Quoted(begin, end) + ", set at run time");
  }
  if (it->second.kind == SourceValue::Kind::kAbsent) {
    return SourceValue::Computed("attribute " + t.Quoted(begin, end) +
                                 ", None unless set on the command line");
  }
  return it->second;
}

SourceValue PythonSymbols::ResolveName(std::string_view name, size_t use, int depth) {
  auto it = assignments_.find(std::string(name));
  if (it == assignments_.end() || it->second.empty()) {
    return SourceValue::Computed("name " + QuoteSource(name) + ", not assigned in this file");
  }
  const std::vector<Assignment>& list = it->second;
  const Assignment* chosen = &list.front();
  for (const Assignment& a : list) {
    if (a.position < use) chosen = &a;
  }
  chosen->consumed = true;
  if (!chosen->alias.empty()) {
    if (depth >= kMaxAliasDepth) return SourceValue::Computed("variable " + QuoteSource(name));
    return ResolveName(chosen->alias, chosen->position, depth + 1);
  }
  if (!chosen->function.empty()) return PassedValue(*chosen, name, depth);
  if (chosen->value.kind == SourceValue::Kind::kComputed && !chosen->self_described) {
    return SourceValue::Computed(QuoteSource(name) + " = " + chosen->value.why);
  }
  return chosen->value;
}

// The literal every call of the parameter's function passes to it (by keyword or position),
// when there is at least one call and all pass the same literal; else the parameter's own
// "set by the caller" value.
SourceValue PythonSymbols::PassedValue(const Assignment& parameter, std::string_view name,
                                       int depth) {
  const PyTokenView& t = view_;
  auto it = calls_.find(parameter.function);
  if (it == calls_.end() || depth >= kMaxAliasDepth) return parameter.value;
  std::string passed;
  std::vector<SourceSpan> at;  // every call's literal, when each is written in one place
  bool every_place_known = true;
  for (size_t open : it->second) {
    size_t close = t.MatchingBracket(open);
    size_t begin = 0;
    size_t end = 0;
    int position = 0;
    for (size_t j = open + 1; j < close && end == 0; ++j) {
      size_t item_end = t.ItemEnd(j, close);
      if (t.IsOp(j, "*") || t.IsOp(j, "**")) return parameter.value;  // *args: cannot tell
      bool keyword = t[j].kind == Kind::kName && t.IsOp(j + 1, "=");
      if (keyword ? t.Text(j) == name : position == parameter.parameter_index) {
        begin = keyword ? j + 2 : j;
        end = item_end;
      }
      if (!keyword) ++position;
      j = item_end;
    }
    if (end <= begin) return parameter.value;  // not passed: its default, or an error
    SourceValue value = EvaluateAt(begin, end, begin, depth + 1);
    if (value.kind != SourceValue::Kind::kLiteral || (!passed.empty() && passed != value.text)) {
      return parameter.value;
    }
    passed = value.text;
    every_place_known = every_place_known && !value.at.empty();
    at.insert(at.end(), value.at.begin(), value.at.end());
  }
  if (passed.empty()) return parameter.value;
  SourceValue literal = SourceValue::Literal(passed);
  if (every_place_known) literal.at = std::move(at);
  return literal;
}

}  // namespace hubwatch::audit
