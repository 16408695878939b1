#include "daemon/audit/config_references.h"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/yaml_args.h"
#include "daemon/audit/yaml_scalar.h"

namespace hubwatch::audit {
namespace {

constexpr size_t kMaxJsonDepth = 256;

constexpr std::array<std::string_view, 11> kModelKeys = {"base_model",
                                                         "base_model_name_or_path",
                                                         "model_name_or_path",
                                                         "model",
                                                         "model_id",
                                                         "model_name",
                                                         "pretrained_model_name_or_path",
                                                         "tokenizer",
                                                         "tokenizer_name",
                                                         "tokenizer_name_or_path",
                                                         "reward_model_path"};

constexpr std::array<std::string_view, 4> kRevisionKeys = {
    "revision", "model_revision", "base_model_revision", "tokenizer_revision"};

template <size_t N>
bool OneOf(std::string_view key, const std::array<std::string_view, N>& keys) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Which revision keys pin the model under `key`, in order of preference.
std::vector<std::string_view> RevisionKeysFor(std::string_view key) {
  if (key.rfind("tokenizer", 0) == 0) return {"tokenizer_revision", "model_revision"};
  if (key.rfind("base_model", 0) == 0) return {"base_model_revision", "model_revision", "revision"};
  return {"model_revision", "revision"};
}

// An environment variable's name that says it holds a model (MODEL_ID, HF_MODEL_ID, MODEL_NAME,
// MODEL, TOKENIZER, ...: a model key in upper case, "HF_" optional) or its revision (REVISION,
// MODEL_REVISION, ...): the key it stands for, or "".
std::string EnvKey(std::string_view name) {
  if (name.rfind("HF_", 0) == 0) name.remove_prefix(3);
  std::string key;
  for (char c : name) {
    if (c >= 'a' && c <= 'z') return {};
    key += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return OneOf(key, kModelKeys) || OneOf(key, kRevisionKeys) ? key : std::string();
}

// One scalar a config maps a key to, in the mapping numbered `mapping`, itself held by the
// mapping or list numbered `parent` (-1: none).
struct Entry {
  int mapping = 0;
  int parent = -1;
  std::string key;
  std::string value;
  int line = 0;
  int column = 0;
  int value_column = 0;  // of the value's first byte (after an opening quote)
};

// Where an entry's value is written, for --fix.
SourceSpan SpanOf(const Entry& e) {
  return {.line = e.line, .column = e.value_column, .length = static_cast<int>(e.value.size())};
}

// The 1-based column of the bytes of the scalar written at line[at] (past its opening quote).
int ValueColumn(std::string_view line, size_t at) {
  const bool quoted = at < line.size() && (line[at] == '"' || line[at] == '\'');
  return static_cast<int>(at) + (quoted ? 2 : 1);
}

// The model entries of a config. Also reads Kubernetes-style environment lists, `- name:
// MODEL_ID` with a sibling `value: ORG/NAME` (pinned by a `- name: REVISION` item of the same
// list), as "FORMAT:env:NAME".
class Collector {
 public:
  // `column`: where the value is written (its quote, if quoted); `value_column`: its bytes.
  void Add(int mapping, int parent, std::string_view key, std::string value, int line, int column,
           int value_column) {
    if (OneOf(key, kModelKeys) || OneOf(key, kRevisionKeys) || key == "name" || key == "value") {
      entries_.push_back(
          {mapping, parent, std::string(key), std::move(value), line, column, value_column});
    }
  }

  void Evaluate(FindingsBuilder& out, std::string_view prefix) {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.mapping < b.mapping; });
    std::vector<EnvVariable> env;
    for (size_t begin = 0; begin < entries_.size();) {
      size_t end = begin;
      while (end < entries_.size() && entries_[end].mapping == entries_[begin].mapping) ++end;
      ReadEnvVariable(begin, end, env);
      for (size_t i = begin; i < end; ++i) {
        const Entry& e = entries_[i];
        if (!OneOf(e.key, kModelKeys)) continue;
        SourceValue revision;
        for (std::string_view rk : RevisionKeysFor(e.key)) {
          for (size_t j = begin; j < end && revision.kind == SourceValue::Kind::kAbsent; ++j) {
            if (entries_[j].key == rk) {
              revision = SourceValue::Literal(entries_[j].value, SpanOf(entries_[j]));
            }
          }
        }
        out.Add(std::string(prefix) + ":" + e.key, e.line, e.column, SourceValue::Literal(e.value),
                revision, IdContext::kOrgNameOnly);
      }
      begin = end;
    }
    for (const EnvVariable& model : env) {
      if (!OneOf(model.key, kModelKeys)) continue;
      SourceValue revision;
      for (std::string_view rk : RevisionKeysFor(model.key)) {
        for (const EnvVariable& r : env) {
          if (r.parent == model.parent && r.key == rk &&
              revision.kind == SourceValue::Kind::kAbsent)
            revision = SourceValue::Literal(r.value->value, SpanOf(*r.value));
        }
      }
      const Entry& v = *model.value;
      out.Add(std::string(prefix) + ":env:" + model.name, v.line, v.column,
              SourceValue::Literal(v.value), revision, IdContext::kOrgNameOnly);
    }
  }

 private:
  struct EnvVariable {
    int parent;
    std::string key;     // the model or revision key its name stands for
    std::string name;    // as written
    const Entry* value;  // its `value:` entry
  };

  // entries_[begin, end), one mapping: `name: MODEL_ID` with a sibling `value:`.
  void ReadEnvVariable(size_t begin, size_t end, std::vector<EnvVariable>& env) const {
    const Entry* name = nullptr;
    const Entry* value = nullptr;
    for (size_t i = begin; i < end; ++i) {
      if (entries_[i].key == "name") name = &entries_[i];
      if (entries_[i].key == "value") value = &entries_[i];
    }
    if (name == nullptr || value == nullptr) return;
    std::string key = EnvKey(name->value);
    if (!key.empty()) env.push_back({name->parent, std::move(key), name->value, value});
  }

  std::vector<Entry> entries_;
};

class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool Next(std::string_view& line) {
    if (pos_ > text_.size() || (pos_ == text_.size() && pos_ != 0)) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = TrimRight(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    ++number_;
    return true;
  }
  int number() const { return number_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int number_ = 0;
};

size_t Indent(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

bool IsBlankOrComment(std::string_view line) {
  size_t n = line.find_first_not_of(" \t");
  return n == std::string_view::npos || line[n] == '#';
}

// "key: value" at line[pos]: the key and where its value starts (npos when not a key line).
std::pair<std::string, size_t> YamlKey(std::string_view line, size_t pos) {
  if (pos >= line.size()) return {{}, std::string_view::npos};
  if (line[pos] == '"' || line[pos] == '\'') {
    auto [key, used] = Unquote(line.substr(pos));
    size_t colon = pos + used;
    if (used == 0 || colon >= line.size() || line[colon] != ':')
      return {{}, std::string_view::npos};
    return {key, colon + 1};
  }
  for (size_t i = pos; i < line.size(); ++i) {
    char c = line[i];
    if (c == '#' || c == '{' || c == '[' || c == '"' || c == '\'') break;
    if (c == ':' && (i + 1 == line.size() || line[i + 1] == ' ' || line[i + 1] == '\t')) {
      if (i == pos) break;
      return {std::string(TrimRight(line.substr(pos, i - pos))), i + 1};
    }
  }
  return {{}, std::string_view::npos};
}

void ReadYaml(std::string_view text, Collector& out) {
  struct Frame {
    size_t indent;
    int mapping;
  };
  std::vector<Frame> frames;
  int next_mapping = 0;
  LineReader reader(text);
  std::string_view line;
  size_t block_indent = std::string_view::npos;  // inside a | or > block scalar
  std::string pending_key;                       // "key:" whose value is on the next line
  int pending_mapping = 0;
  int pending_parent = -1;
  size_t pending_indent = 0;
  while (reader.Next(line)) {
    if (IsBlankOrComment(line)) continue;
    size_t indent = Indent(line);
    if (block_indent != std::string_view::npos) {
      if (indent > block_indent) continue;
      block_indent = std::string_view::npos;
    }
    if (line == "---" || line == "...") {
      frames.clear();
      pending_key.clear();
      continue;
    }
    size_t pos = indent;
    bool item = false;
    while (pos < line.size() && line[pos] == '-' &&
           (pos + 1 == line.size() || line[pos + 1] == ' ')) {
      item = true;
      pos = std::min(line.size(), Indent(line.substr(pos + 1)) + pos + 1);
    }
    auto [key, value_at] = YamlKey(line, pos);
    if (!pending_key.empty()) {
      if (value_at == std::string_view::npos && !item && indent > pending_indent) {
        out.Add(pending_mapping, pending_parent, pending_key, ScalarValue(line.substr(pos)),
                reader.number(), static_cast<int>(pos) + 1, ValueColumn(line, pos));
      }
      pending_key.clear();
    }
    if (value_at == std::string_view::npos) continue;
    while (!frames.empty() &&
           (frames.back().indent > pos || (item && frames.back().indent == pos))) {
      frames.pop_back();
    }
    if (frames.empty() || frames.back().indent != pos) frames.push_back({pos, next_mapping++});
    int mapping = frames.back().mapping;
    int parent = frames.size() > 1 ? frames[frames.size() - 2].mapping : -1;
    size_t v = line.find_first_not_of(" \t", value_at);
    if (v == std::string_view::npos) {
      pending_key = key;
      pending_mapping = mapping;
      pending_parent = parent;
      pending_indent = pos;
      continue;
    }
    if (line[v] == '|' || line[v] == '>') {
      block_indent = pos;
      continue;
    }
    out.Add(mapping, parent, key, ScalarValue(line.substr(v)), reader.number(),
            static_cast<int>(v) + 1, ValueColumn(line, v));
  }
}

void ReadToml(std::string_view text, Collector& out) {
  int mapping = 0;
  LineReader reader(text);
  std::string_view line;
  while (reader.Next(line)) {
    if (IsBlankOrComment(line)) continue;
    size_t pos = Indent(line);
    if (line[pos] == '[') {
      ++mapping;
      continue;
    }
    size_t eq = line.find('=', pos);
    if (eq == std::string_view::npos) continue;
    std::string key(TrimRight(line.substr(pos, eq - pos)));
    if (!key.empty() && (key[0] == '"' || key[0] == '\'')) key = Unquote(key).first;
    if (size_t dot = key.rfind('.'); dot != std::string::npos) key = key.substr(dot + 1);
    size_t v = line.find_first_not_of(" \t", eq + 1);
    if (v == std::string_view::npos || (line[v] != '"' && line[v] != '\'')) continue;
    out.Add(mapping, -1, key, Unquote(line.substr(v)).first, reader.number(),
            static_cast<int>(v) + 1, static_cast<int>(v) + 2);
  }
}

void ReadJson(std::string_view text, Collector& out) {
  struct Frame {
    bool object;
    int mapping;
  };
  std::vector<Frame> frames;
  int next_mapping = 0;
  int line = 1;
  size_t line_start = 0;
  std::string key;
  bool after_colon = false;           // the next value belongs to `key`
  size_t line_end = text.find('\n');  // strings end at it: JSON has no raw newline in one
  if (line_end == std::string_view::npos) line_end = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      line_end = text.find('\n', line_start);
      if (line_end == std::string_view::npos) line_end = text.size();
    } else if (c == '{' || c == '[') {
      if (frames.size() >= kMaxJsonDepth) return;
      frames.push_back({c == '{', next_mapping++});
      after_colon = false;
    } else if (c == '}' || c == ']') {
      if (!frames.empty()) frames.pop_back();
      after_colon = false;
    } else if (c == ':') {
      after_colon = true;
    } else if (c == ',') {
      after_colon = false;
    } else if (c == '"') {
      size_t start = i;
      auto [value, used] = Unquote(text.substr(i, line_end - i));
      if (used == 0) {  // unterminated: skip to the end of the line
        i = line_end - 1;
        continue;
      }
      i += used - 1;
      if (frames.empty() || !frames.back().object) continue;
      if (after_colon) {
        int parent = frames.size() > 1 ? frames[frames.size() - 2].mapping : -1;
        out.Add(frames.back().mapping, parent, key, std::move(value), line,
                static_cast<int>(start - line_start) + 1, static_cast<int>(start - line_start) + 2);
        after_colon = false;
      } else {
        key = std::move(value);
      }
    }
  }
}

}  // namespace

FileFindings FindConfigReferences(std::string_view file, std::string_view text,
                                  ConfigFormat format) {
  Collector collector;
  FindingsBuilder out(file);
  switch (format) {
    case ConfigFormat::kYaml:
      ReadYaml(text, collector);
      collector.Evaluate(out, "yaml");
      ReadYamlArgs(text, out);
      break;
    case ConfigFormat::kJson:
      ReadJson(text, collector);
      collector.Evaluate(out, "json");
      break;
    case ConfigFormat::kToml:
      ReadToml(text, collector);
      collector.Evaluate(out, "toml");
      break;
  }
  return out.Take();
}

}  // namespace hubwatch::audit
