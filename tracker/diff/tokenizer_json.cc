#include "tracker/diff/tokenizer_json.h"

namespace hubwatch::diff {
namespace {

std::string_view Find(const TokenizerJsonLayout::Members& members, std::string_view key) {
  std::string_view found;
  for (const auto& [name, raw] : members) {
    if (name == key) found = raw;
  }
  return found;
}

// Reads the members of the object at the cursor, recording each raw value. The members of the
// member named `nested` (when an object) go to *nested_members in the same pass.
bool ScanMembers(std::string_view text, JsonCursor& cursor, TokenizerJsonLayout::Members& members,
                 std::string_view nested = {},
                 TokenizerJsonLayout::Members* nested_members = nullptr) {
  StringArena arena;
  if (!cursor.BeginObject()) return false;
  bool first = true;
  std::string_view key;
  while (cursor.NextMember(&first, &key, &arena)) {
    std::string_view raw;
    if (nested_members != nullptr && key == nested && cursor.Peek() == '{') {
      const size_t start = cursor.pos();
      nested_members->clear();  // a later duplicate wins
      if (!ScanMembers(text, cursor, *nested_members)) return false;
      raw = text.substr(start, cursor.pos() - start);
    } else if (!cursor.SkipValue(&raw)) {
      return false;
    }
    members.emplace_back(std::string(key), raw);
  }
  return !cursor.failed();
}

Error SectionError(std::string_view section, const JsonCursor& cursor) {
  return Error::InvalidInput(std::string(section) + ": " + cursor.error());
}

}  // namespace

std::string_view TokenizerJsonLayout::Section(std::string_view key) const {
  return Find(sections, key);
}

std::string_view TokenizerJsonLayout::ModelField(std::string_view key) const {
  return Find(model, key);
}

Result<TokenizerJsonLayout> ScanTokenizerJson(std::string_view text) {
  TokenizerJsonLayout layout;
  JsonCursor cursor(text);
  if (cursor.Peek() != '{') return Error::InvalidInput("not a tokenizer.json: not a JSON object");
  if (!ScanMembers(text, cursor, layout.sections, "model", &layout.model) || !cursor.AtEnd()) {
    return Error::InvalidInput("invalid JSON: " + (cursor.failed()
                                                       ? cursor.error()
                                                       : "byte " + std::to_string(cursor.pos()) +
                                                             ": text after the top-level object"));
  }
  const std::string_view model = layout.Section("model");
  if (model.empty() || model.front() != '{') {
    return Error::InvalidInput("not a tokenizer.json: no \"model\" object");
  }
  if (layout.ModelField("vocab").empty()) {
    return Error::InvalidInput("not a tokenizer.json: \"model\" has no \"vocab\"");
  }
  return layout;
}

Result<Vocab> ParseVocab(std::string_view raw) {
  Vocab vocab;
  JsonCursor cursor(raw);
  vocab.tokens.reserve(raw.size() / 16);
  bool first = true;
  std::string_view token;
  if (cursor.Peek() == '[') {
    vocab.unigram = true;
    cursor.BeginArray();
    while (cursor.NextElement(&first)) {
      double score = 0;
      if (!cursor.BeginArray() || !cursor.ReadString(&token, &vocab.arena) || !cursor.Expect(',') ||
          !cursor.ReadDouble(&score) || !cursor.Expect(']')) {
        break;
      }
      vocab.tokens.emplace_back(token, static_cast<int64_t>(vocab.tokens.size()));
      vocab.scores.push_back(score);
    }
  } else if (cursor.BeginObject()) {
    while (cursor.NextMember(&first, &token, &vocab.arena)) {
      int64_t id = 0;
      if (!cursor.ReadInt64(&id)) break;
      if (id < 0) {
        cursor.Fail("negative token id");
        break;
      }
      vocab.tokens.emplace_back(token, id);
    }
  }
  if (cursor.failed()) return SectionError("model.vocab", cursor);
  return vocab;
}

std::string_view MergesFormatName(MergesFormat format) {
  switch (format) {
    case MergesFormat::kEmpty:
      return "empty";
    case MergesFormat::kStrings:
      return "strings";
    case MergesFormat::kPairs:
      return "pairs";
    case MergesFormat::kMixed:
      return "mixed";
  }
  return "empty";
}

Result<Merges> ParseMerges(std::string_view raw) {
  Merges merges;
  JsonCursor cursor(raw);
  merges.pairs.reserve(raw.size() / 12);
  bool first = true;
  bool saw_strings = false;
  bool saw_pairs = false;
  if (cursor.BeginArray()) {
    while (cursor.NextElement(&first)) {
      std::string_view a;
      std::string_view b;
      if (cursor.Peek() == '[') {
        saw_pairs = true;
        if (!cursor.BeginArray() || !cursor.ReadString(&a, &merges.arena) || !cursor.Expect(',') ||
            !cursor.ReadString(&b, &merges.arena) || !cursor.Expect(']')) {
          break;
        }
      } else {
        saw_strings = true;
        std::string_view merge;
        if (!cursor.ReadString(&merge, &merges.arena)) break;
        const size_t space = merge.find(' ');
        if (space == std::string_view::npos) {
          cursor.Fail("a merge without a space");
          break;
        }
        a = merge.substr(0, space);
        b = merge.substr(space + 1);
      }
      merges.pairs.emplace_back(a, b);
    }
  }
  if (cursor.failed()) return SectionError("model.merges", cursor);
  merges.format = saw_pairs && saw_strings ? MergesFormat::kMixed
                  : saw_pairs              ? MergesFormat::kPairs
                  : saw_strings            ? MergesFormat::kStrings
                                           : MergesFormat::kEmpty;
  return merges;
}

}  // namespace hubwatch::diff
