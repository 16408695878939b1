#include "daemon/audit/python_expressions.h"

#include <algorithm>

namespace hubwatch::audit {
namespace {

using Kind = PyToken::Kind;

// os.environ["X"], os.getenv("X"[, "default"]), os.environ.get("X"[, "default"]); absent
// when the expression does not read the environment.
SourceValue FromEnvironment(const PyTokenView& t, size_t begin, size_t end) {
  bool environ = false;
  for (size_t j = begin; j < end; ++j)
    environ = environ || t.IsName(j, "environ") || t.IsName(j, "getenv");
  if (!environ) return SourceValue::Absent();
  if (end >= begin + 6 && t.IsOp(end - 1, ")") && t[end - 2].kind == Kind::kString &&
      !t[end - 2].f_string && t.IsOp(end - 3, ",") && t[end - 4].kind == Kind::kString &&
      t.IsOp(end - 5, "(") && (t.IsName(end - 6, "getenv") || t.IsName(end - 6, "get"))) {
    return SourceValue::Literal(t.StringValue(end - 2), t.BodySpan(end - 2));  // the default
  }
  for (size_t j = begin; j < end; ++j) {
    if (t[j].kind == Kind::kString) {
      return SourceValue::Computed("environment variable " + QuoteSource(t.StringValue(j)));
    }
  }
  return SourceValue::Computed("the environment");
}

}  // namespace

PyTokenView::PyTokenView(std::string_view source, const std::vector<PyToken>& tokens)
    : source_(source), tokens_(tokens), match_(tokens.size(), tokens.size()) {
  std::vector<size_t> open;
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].kind != Kind::kOp) continue;
    std::string_view t = Text(i);
    if (t == "(" || t == "[" || t == "{") {
      open.push_back(i);
    } else if ((t == ")" || t == "]" || t == "}") && !open.empty()) {
      match_[open.back()] = i;
      open.pop_back();
    }
  }
}

bool PyTokenView::IsOp(size_t i, std::string_view op) const {
  return i < tokens_.size() && tokens_[i].kind == Kind::kOp && Text(i) == op;
}

bool PyTokenView::IsName(size_t i, std::string_view name) const {
  return i < tokens_.size() && tokens_[i].kind == Kind::kName && Text(i) == name;
}

size_t PyTokenView::ItemEnd(size_t from, size_t close) const {
  size_t j = from;
  while (j < close && !IsOp(j, ",")) j = IsOpening(j) ? match_[j] + 1 : j + 1;
  return std::min(j, close);
}

SourceSpan PyTokenView::BodySpan(size_t i) const {
  const PyToken& token = tokens_[i];
  return {.line = token.line,
          .column = token.column + static_cast<int>(token.body_offset - token.offset),
          .length = static_cast<int>(token.body_length)};
}

std::string PyTokenView::Quoted(size_t begin, size_t end) const {
  if (begin >= end) return "\"\"";
  size_t from = tokens_[begin].offset;
  size_t to = tokens_[end - 1].offset + tokens_[end - 1].length;
  return QuoteSource(source_.substr(from, to - from));
}

SourceValue LiteralExpression(const PyTokenView& t, size_t begin, size_t end) {
  if (begin >= end || (end == begin + 1 && t.IsName(begin, "None"))) return SourceValue::Absent();
  bool strings_only = true;
  bool f_string = false;
  for (size_t j = begin; j < end; ++j) {
    strings_only = strings_only && t[j].kind == Kind::kString;
    f_string = f_string || (t[j].kind == Kind::kString && t[j].f_string);
  }
  if (strings_only) {
    if (f_string) return SourceValue::Computed("an f-string, " + t.Quoted(begin, end));
    if (end == begin + 1) return SourceValue::Literal(t.StringValue(begin), t.BodySpan(begin));
    std::string value;  // concatenated: no one place holds it
    for (size_t j = begin; j < end; ++j) value += t.StringValue(j);
    return SourceValue::Literal(std::move(value));
  }
  if (SourceValue env = FromEnvironment(t, begin, end); env.kind != SourceValue::Kind::kAbsent) {
    return env;
  }
  for (size_t j = begin; j < end; ++j) {
    if (t.IsName(j, "argv"))
      return SourceValue::Computed("the command line, " + t.Quoted(begin, end));
  }
  for (size_t j = begin; j < end; ++j) {
    if (t.IsName(j, "if")) {
      return SourceValue::Computed("a conditional expression, " + t.Quoted(begin, end));
    }
  }
  for (size_t j = begin; j < end; ++j) {
    if (t.IsOp(j, "(")) return SourceValue::Computed("a function call, " + t.Quoted(begin, end));
  }
  return SourceValue::Computed("an expression, " + t.Quoted(begin, end));
}

ArgparseOption ReadArgparseOption(const PyTokenView& t, size_t open) {
  size_t close = std::min(t.MatchingBracket(open), t.size());
  ArgparseOption option;
  std::string flag;
  bool has_default = false;
  for (size_t j = open + 1; j < close; ++j) {
    size_t begin = j;
    size_t end = j = t.ItemEnd(j, close);
    if (end == begin + 1 && t[begin].kind == Kind::kString && flag.empty()) {
      std::string name = t.StringValue(begin);
      if (name.rfind("--", 0) == 0 || name.rfind('-', 0) != 0) flag = name;
    } else if (end > begin + 2 && t.IsOp(begin + 1, "=")) {
      if (t.IsName(begin, "default")) {
        has_default = true;
        option.value = LiteralExpression(t, begin + 2, end);
        if (end == begin + 3 && t[begin + 2].kind == Kind::kName) option.default_name = begin + 2;
      } else if (t.IsName(begin, "dest") && t[begin + 2].kind == Kind::kString) {
        option.dest = t.StringValue(begin + 2);
      }
    }
  }
  if (option.dest.empty()) {
    size_t start = std::min(flag.find_first_not_of('-'), flag.size());
    option.dest = flag.substr(start);
    std::replace(option.dest.begin(), option.dest.end(), '-', '_');
  }
  if (!has_default) {
    option.value = SourceValue::Computed("command-line option " + QuoteSource(flag) +
                                         ", which has no default");
  } else if (option.value.kind == SourceValue::Kind::kComputed) {
    option.value.why =
        "command-line option " + QuoteSource(flag) + ", whose default is " + option.value.why;
  }
  return option;
}

}  // namespace hubwatch::audit
