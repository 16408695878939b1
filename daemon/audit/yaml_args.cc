#include "daemon/audit/yaml_args.h"

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "daemon/audit/model_flags.h"
#include "daemon/audit/yaml_scalar.h"

namespace hubwatch::audit {
namespace {

constexpr size_t kNone = std::string_view::npos;

struct Arg {
  std::string text;
  int line = 0;
  int column = 0;
  int length = 0;  // the bytes it takes in the source line, quotes included
};

SourceSpan SpanOf(const Arg& a) { return {.line = a.line, .column = a.column, .length = a.length}; }

// The bytes the scalar at s[0] takes: a quoted one with its quotes, a plain one up to a comment.
size_t ScalarLength(std::string_view s) {
  if (!s.empty() && (s[0] == '"' || s[0] == '\'')) return Unquote(s).second;
  return TrimRight(s.substr(0, s.find(" #"))).size();
}

// Where the value of a `key: value` line starting at `pos` begins (kNone: not a key line).
size_t KeyValueStart(std::string_view line, size_t pos) {
  size_t i = pos;
  if (i < line.size() && (line[i] == '"' || line[i] == '\'')) {
    size_t used = Unquote(line.substr(i)).second;
    if (used == 0) return kNone;
    i += used;
    return i < line.size() && line[i] == ':' ? i + 1 : kNone;
  }
  for (; i < line.size(); ++i) {
    char c = line[i];
    if (c == '#' || c == '[' || c == '{' || c == '"' || c == '\'') return kNone;
    if (c == ':' && i > pos && (i + 1 == line.size() || line[i + 1] == ' ')) return i + 1;
  }
  return kNone;
}

class ArgsReader {
 public:
  explicit ArgsReader(FindingsBuilder& out) : out_(out) {}

  void Line(std::string_view line, int number) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == kNone || line[indent] == '#') return;
    if (block_indent_ != kNone && indent > block_indent_) return;  // a block scalar's text
    block_indent_ = kNone;
    if (flow_depth_ > 0) return Flow(line, indent, number);
    if (line == "---" || line == "...") return Flush();
    bool item = line[indent] == '-' && (indent + 1 == line.size() || line[indent + 1] == ' ');
    if (!item) {
      if (list_indent_ == kNone || indent <= list_indent_) Flush();  // else a scalar goes on
      return Value(line, KeyValueStart(line, indent), indent, number);
    }
    if (indent != list_indent_) Flush();
    list_indent_ = indent;
    size_t at = line.find_first_not_of(' ', indent + 1);
    if (at == kNone) return Flush();
    size_t value = KeyValueStart(line, at);
    if (value != kNone || line[at] == '[' || line[at] == '{' || line[at] == '|' ||
        line[at] == '>') {  // a mapping, a nested sequence or a block: not a list of words
      Flush();
      return Value(line, value, indent, number);
    }
    list_.push_back({ScalarValue(line.substr(at)), number, static_cast<int>(at) + 1,
                     static_cast<int>(ScalarLength(line.substr(at)))});
  }

  void Flush() {
    if (!discard_) Evaluate();
    list_.clear();
    list_indent_ = kNone;
    discard_ = false;
  }

 private:
  // The value of a key line from `value` on: a flow sequence starts, a block scalar hides what
  // follows.
  void Value(std::string_view line, size_t value, size_t indent, int number) {
    if (value == kNone) return;
    size_t v = line.find_first_not_of(' ', value);
    if (v == kNone) return;
    if (line[v] == '|' || line[v] == '>') {
      block_indent_ = indent;
    } else if (line[v] == '[') {
      Flush();
      Flow(line, v, number);
    }
  }

  // Reads flow-sequence text from line[from]: scalars at depth 1 are words; a nested
  // collection makes it not an argument list.
  void Flow(std::string_view line, size_t from, int number) {
    for (size_t i = from; i < line.size();) {
      char c = line[i];
      if (c == ' ' || c == ',' || c == '\t') {
        ++i;
      } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
        return;
      } else if (c == '[' || c == '{') {
        discard_ = discard_ || flow_depth_ > 0;
        ++flow_depth_;
        ++i;
      } else if (c == ']' || c == '}') {
        ++i;
        if (--flow_depth_ == 0) return Flush();
      } else if (c == '"' || c == '\'') {
        auto [text, used] = Unquote(line.substr(i));
        if (used == 0) return;  // not closed on this line: dropped
        Word(std::move(text), number, i, used);
        i += used;
      } else {
        size_t end = line.find_first_of(",]}", i);
        if (end == kNone) end = line.size();
        std::string word(TrimRight(line.substr(i, end - i)));
        const size_t length = word.size();
        Word(std::move(word), number, i, length);
        i = end;
      }
    }
  }

  void Word(std::string text, int number, size_t at, size_t length) {
    if (flow_depth_ == 1) {
      list_.push_back(
          {std::move(text), number, static_cast<int>(at) + 1, static_cast<int>(length)});
    }
  }

  template <size_t N>
  SourceValue FirstFlag(const std::array<std::string_view, N>& flags) const {
    for (std::string_view flag : flags) {
      for (size_t i = 0; i < list_.size(); ++i) {
        bool inline_value = false;
        std::string value;
        if (!MatchFlag(list_[i].text, flag, &inline_value, &value)) continue;
        if (inline_value) return SourceValue::Literal(std::move(value), SpanOf(list_[i]));
        if (i + 1 < list_.size()) {
          return SourceValue::Literal(list_[i + 1].text, SpanOf(list_[i + 1]));
        }
      }
    }
    return SourceValue::Absent();
  }

  void Evaluate() {
    if (list_.empty()) return;
    SourceValue revision = FirstFlag(kRevisionFlags);
    SourceValue tokenizer_revision = FirstFlag(kTokenizerRevisionFlags);
    for (size_t i = 0; i < list_.size(); ++i) {
      for (std::string_view flag : kModelFlags) {
        bool inline_value = false;
        std::string value;
        if (!MatchFlag(list_[i].text, flag, &inline_value, &value)) continue;
        if (!inline_value && i + 1 == list_.size()) break;  // a flag without its value
        const Arg& at = inline_value ? list_[i] : list_[i + 1];
        bool tokenizer = flag.find("tokenizer") != std::string_view::npos;
        out_.Add("yaml:args", at.line, at.column,
                 SourceValue::Literal(inline_value ? std::move(value) : at.text),
                 tokenizer ? tokenizer_revision : revision, IdContext::kOrgNameOnly);
        break;
      }
    }
  }

  FindingsBuilder& out_;
  std::vector<Arg> list_;
  size_t list_indent_ = kNone;   // the block sequence's item indent
  size_t block_indent_ = kNone;  // inside a block scalar: lines deeper than this
  int flow_depth_ = 0;           // inside a flow collection
  bool discard_ = false;         // the flow sequence nests collections
};

}  // namespace

void ReadYamlArgs(std::string_view text, FindingsBuilder& out) {
  ArgsReader reader(out);
  int number = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == kNone) end = text.size();
    reader.Line(TrimRight(text.substr(pos, end - pos)), ++number);
    pos = end + 1;
  }
  reader.Flush();
}

}  // namespace hubwatch::audit
