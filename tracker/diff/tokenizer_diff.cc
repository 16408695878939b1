#include "tracker/diff/tokenizer_diff.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tracker/diff/json_file.h"
#include "tracker/diff/json_text.h"
#include "tracker/diff/tokenizer_json.h"
#include "tracker/diff/tokenizer_sections.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

// Sections of a modified tokenizer.json shown in a change, most severe first. The file's
// top-level members are upstream's to choose: 100k of them must not make a 100k-part change.
constexpr size_t kMaxListedSections = 16;

struct NamedSection {
  std::string name;
  SectionDiff diff;
};

// A section's raw text as JSON; absent (an empty view) is null.
Result<json> ParseSection(std::string_view name, std::string_view raw) {
  if (raw.empty()) return json();
  Result<json> doc = ParseJson(raw);
  if (!doc.ok()) return Error::InvalidInput(std::string(name) + ": " + doc.error().message);
  return doc;
}

// The members of "model" other than vocab and merges, as one object.
Result<json> ModelRest(const TokenizerJsonLayout& layout) {
  json rest = json::object();
  for (const auto& [key, raw] : layout.model) {
    if (key == "vocab" || key == "merges") continue;
    Result<json> value = ParseSection("model." + key, raw);
    if (!value.ok()) return value.error();
    rest[key] = std::move(value).value();
  }
  return rest;
}

// Keys of both member lists, the new side's order first.
std::vector<std::string> UnionKeys(const TokenizerJsonLayout::Members& before,
                                   const TokenizerJsonLayout::Members& after) {
  std::vector<std::string> keys;
  std::unordered_set<std::string_view> seen;  // upstream decides how many there are
  for (const auto* members : {&after, &before}) {
    for (const auto& [key, raw] : *members) {
      if (seen.insert(key).second) keys.push_back(key);
    }
  }
  return keys;
}

// Key -> raw value, a later duplicate winning as in TokenizerJsonLayout::Section; one lookup per
// key instead of a scan, for upstream decides how many sections there are.
std::unordered_map<std::string_view, std::string_view> IndexMembers(
    const TokenizerJsonLayout::Members& members) {
  std::unordered_map<std::string_view, std::string_view> index;
  index.reserve(members.size());
  for (const auto& [key, raw] : members) index[key] = raw;
  return index;
}

std::string_view Lookup(const std::unordered_map<std::string_view, std::string_view>& index,
                        std::string_view key) {
  const auto found = index.find(key);
  return found == index.end() ? std::string_view() : found->second;
}

// Why two revisions could not be compared, and on which side.
struct Failure {
  bool old_side = false;
  std::string message;
};

// Parses each side with `parse`; on failure records which side failed.
template <class T, class In, class Parse>
bool ParseBoth(Parse parse, In old_raw, In new_raw, T* old_value, T* new_value,
               std::optional<Failure>* failure) {
  Result<T> parsed_new = parse(new_raw);
  if (!parsed_new.ok()) {
    *failure = Failure{false, parsed_new.error().message};
    return false;
  }
  Result<T> parsed_old = parse(old_raw);
  if (!parsed_old.ok()) {
    *failure = Failure{true, parsed_old.error().message};
    return false;
  }
  *old_value = std::move(parsed_old).value();
  *new_value = std::move(parsed_new).value();
  return true;
}

// Appends the model's section diffs: vocab, merges, and the other fields as "model".
std::optional<Failure> DiffModel(const TokenizerJsonLayout& before,
                                 const TokenizerJsonLayout& after,
                                 std::vector<NamedSection>& sections) {
  std::optional<Failure> failure;
  if (before.ModelField("vocab") != after.ModelField("vocab")) {
    Vocab old_vocab;
    Vocab new_vocab;
    if (!ParseBoth(ParseVocab, before.ModelField("vocab"), after.ModelField("vocab"), &old_vocab,
                   &new_vocab, &failure)) {
      return failure;
    }
    if (auto vocab = DiffVocabSection(old_vocab, new_vocab)) {
      sections.push_back({"vocab", std::move(*vocab)});
    }
  }
  const std::string_view old_merges = before.ModelField("merges");
  const std::string_view new_merges = after.ModelField("merges");
  if (old_merges != new_merges) {
    Merges old_list;
    Merges new_list;
    auto parse = [](std::string_view raw) { return ParseMerges(raw.empty() ? "[]" : raw); };
    if (!ParseBoth(parse, old_merges, new_merges, &old_list, &new_list, &failure)) return failure;
    if (auto merges = DiffMergesSection(old_list, new_list)) {
      sections.push_back({"merges", std::move(*merges)});
    }
  }
  json old_rest;
  json new_rest;
  if (!ParseBoth([](const TokenizerJsonLayout* layout) { return ModelRest(*layout); }, &before,
                 &after, &old_rest, &new_rest, &failure)) {
    return failure;
  }
  if (std::optional<SectionDiff> rest = DiffComponentSection("model", old_rest, new_rest)) {
    if (old_rest.value("type", json()) != new_rest.value("type", json())) {
      rest->impact = Impact::kBreaking;  // another tokenization algorithm
    }
    sections.push_back({"model", std::move(*rest)});
  }
  return std::nullopt;
}

// Every section diff of two readable tokenizer.json files.
std::optional<Failure> DiffSections(const TokenizerJsonLayout& before,
                                    const TokenizerJsonLayout& after,
                                    std::vector<NamedSection>& sections) {
  const auto before_index = IndexMembers(before.sections);
  const auto after_index = IndexMembers(after.sections);
  for (const std::string& key : UnionKeys(before.sections, after.sections)) {
    if (key == "model") {
      if (std::optional<Failure> failure = DiffModel(before, after, sections)) return failure;
      continue;
    }
    const std::string_view old_raw = Lookup(before_index, key);
    const std::string_view new_raw = Lookup(after_index, key);
    if (old_raw == new_raw) continue;
    std::optional<Failure> failure;
    json old_value;
    json new_value;
    auto parse = [&](std::string_view raw) -> Result<json> {
      Result<json> value = ParseSection(key, raw);
      if (value.ok() && key == "added_tokens") {
        Status status = CheckAddedTokens(*value);
        if (!status.ok()) return status.error();
      }
      return value;
    };
    if (!ParseBoth(parse, old_raw, new_raw, &old_value, &new_value, &failure)) return failure;
    std::optional<SectionDiff> diff = key == "added_tokens"
                                          ? DiffAddedTokensSection(old_value, new_value)
                                          : DiffComponentSection(key, old_value, new_value);
    if (diff) sections.push_back({key, std::move(*diff)});
  }
  return std::nullopt;
}

// "BPE, 128256 tokens, 280147 merges, 256 added tokens" for a file added or removed; also
// checks that the vocab and merges read.
Result<std::string> Overview(const TokenizerJsonLayout& layout) {
  Result<Vocab> vocab = ParseVocab(layout.ModelField("vocab"));
  if (!vocab.ok()) return vocab.error();
  const std::string_view raw_merges = layout.ModelField("merges");
  Result<Merges> merges = ParseMerges(raw_merges.empty() ? "[]" : raw_merges);
  if (!merges.ok()) return merges.error();
  Result<json> type = ParseSection("model.type", layout.ModelField("type"));
  if (!type.ok()) return type.error();
  Result<json> added = ParseSection("added_tokens", layout.Section("added_tokens"));
  if (!added.ok()) return added.error();
  std::string out = type->is_string() ? type->get<std::string>() : std::string("model");
  out += ", " + std::to_string(vocab->tokens.size()) + " tokens";
  if (!merges->pairs.empty()) out += ", " + std::to_string(merges->pairs.size()) + " merges";
  if (added->is_array()) out += ", " + std::to_string(added->size()) + " added tokens";
  return out;
}

std::vector<Change> DiffTokenizerJsonFile(const std::optional<std::string>& before,
                                          const std::optional<std::string>& after,
                                          std::string_view path) {
  if (before == after) return {};
  std::optional<TokenizerJsonLayout> new_layout;
  std::optional<TokenizerJsonLayout> old_layout;
  if (after) {
    Result<TokenizerJsonLayout> layout = ScanTokenizerJson(*after);
    if (!layout.ok()) return {ErrorChange(path, layout.error().message)};
    new_layout = std::move(layout).value();
  }
  if (before) {
    Result<TokenizerJsonLayout> layout = ScanTokenizerJson(*before);
    if (!layout.ok()) {
      return {PreviouslyInvalidChange(ChangeKind::kTokenizer, path, after.has_value(),
                                      layout.error().message)};
    }
    old_layout = std::move(layout).value();
  }
  Change change;
  change.kind = ChangeKind::kTokenizer;
  change.path = std::string(path);
  change.impact = Impact::kBehavioral;
  if (!old_layout || !new_layout) {
    const bool added = new_layout.has_value();
    Result<std::string> overview = Overview(added ? *new_layout : *old_layout);
    if (!overview.ok()) {
      if (added) return {ErrorChange(path, overview.error().message)};
      return {
          PreviouslyInvalidChange(ChangeKind::kTokenizer, path, false, overview.error().message)};
    }
    change.summary =
        std::string(added ? "file added: " : "file removed (was ") + *overview + (added ? "" : ")");
    change.details = {{"file", path}, {"status", added ? "added" : "removed"}};
    return {std::move(change)};
  }

  std::vector<NamedSection> sections;
  if (std::optional<Failure> failure = DiffSections(*old_layout, *new_layout, sections)) {
    if (!failure->old_side) return {ErrorChange(path, failure->message)};
    return {PreviouslyInvalidChange(ChangeKind::kTokenizer, path, true, failure->message)};
  }
  if (sections.empty()) return {};
  std::stable_sort(sections.begin(), sections.end(),
                   [](const NamedSection& a, const NamedSection& b) {
                     return static_cast<int>(a.diff.impact) > static_cast<int>(b.diff.impact);
                   });
  change.impact = Impact::kCosmetic;
  std::vector<std::string> parts;
  json details = json::object();
  for (NamedSection& section : sections) {
    change.impact = MaxImpact(change.impact, section.diff.impact);
    if (parts.size() == kMaxListedSections) continue;  // the summary ends "+N more" anyway
    parts.push_back(section.diff.summary);
    section.diff.details["impact"] = ImpactName(section.diff.impact);
    section.diff.details["summary"] = section.diff.summary;
    details[CutText(section.name, kMaxCappedStringBytes)] = std::move(section.diff.details);
  }
  change.summary = JoinSummary(parts, 240);
  if (sections.size() > parts.size()) {
    change.summary += " (" + std::to_string(sections.size()) + " sections changed)";
  }
  change.details = {{"file", path},
                    {"status", "modified"},
                    {"sections", std::move(details)},
                    {"section_count", sections.size()}};
  return {std::move(change)};
}

// Token ids of an existing token moving is breaking; the rest of these files is behavioral.
Impact TokenizerConfigImpact(const JsonOp& op) {
  if (op.path == "/name_or_path" || op.path == "/_commit_hash") return Impact::kCosmetic;
  if (op.op == JsonOpKind::kReplace && op.path.starts_with("/added_tokens_decoder/") &&
      op.path.ends_with("/content")) {
    return Impact::kBreaking;
  }
  return Impact::kBehavioral;
}

// A small tokenizer JSON file: its semantic diff, classified, without `ignored_key`.
std::vector<Change> SmallFileDiff(const std::optional<std::string>& before,
                                  const std::optional<std::string>& after, std::string_view path,
                                  const FieldClassifier& classify,
                                  std::string_view ignored_key = {}) {
  return GuardedDiff(path, [&] {
    std::vector<Change> changes;
    std::optional<JsonFilePair> pair =
        ParseJsonFilePair(before, after, path, ChangeKind::kTokenizer, changes);
    if (!pair) return changes;
    if (!ignored_key.empty()) {
      if (pair->before) pair->before->erase(std::string(ignored_key));
      if (pair->after) pair->after->erase(std::string(ignored_key));
    }
    if (auto change = FieldsChange(ChangeKind::kTokenizer, path, *pair, classify)) {
      changes.push_back(std::move(*change));
    }
    return changes;
  });
}

}  // namespace

std::vector<Change> DiffTokenizerJson(const std::optional<std::string>& before,
                                      const std::optional<std::string>& after,
                                      std::string_view path) {
  return GuardedDiff(path, [&] { return DiffTokenizerJsonFile(before, after, path); });
}

std::vector<Change> DiffTokenizerConfig(const std::optional<std::string>& before,
                                        const std::optional<std::string>& after,
                                        std::string_view path) {
  return SmallFileDiff(before, after, path, TokenizerConfigImpact, "chat_template");
}

std::vector<Change> DiffSpecialTokensMap(const std::optional<std::string>& before,
                                         const std::optional<std::string>& after,
                                         std::string_view path) {
  return SmallFileDiff(before, after, path, [](const JsonOp&) { return Impact::kBehavioral; });
}

std::vector<Change> DiffAddedTokensJson(const std::optional<std::string>& before,
                                        const std::optional<std::string>& after,
                                        std::string_view path) {
  auto renumbered_is_breaking = [](const JsonOp& op) {
    return op.op == JsonOpKind::kReplace ? Impact::kBreaking : Impact::kBehavioral;
  };
  return SmallFileDiff(before, after, path, renumbered_is_breaking);
}

}  // namespace hubwatch::diff
