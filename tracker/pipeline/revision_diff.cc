#include "tracker/pipeline/revision_diff.h"

#include "tracker/diff/config_diff.h"
#include "tracker/diff/tokenizer_diff.h"

namespace hubwatch::pipeline {
namespace {

std::optional<std::string> FileOf(const Snapshot* s, const std::string& path) {
  return s ? s->File(path) : std::nullopt;
}

void Append(std::vector<diff::Change>& out, std::vector<diff::Change> more) {
  for (diff::Change& c : more) out.push_back(std::move(c));
}

}  // namespace

std::vector<diff::Change> DiffSnapshots(const Snapshot* before, const Snapshot& after) {
  std::vector<diff::Change> out;
  // A file the Hub served badly is an error change, and is left out of the other engines so
  // it does not look removed.
  for (const auto& [path, why] : after.unreadable) {
    out.push_back(diff::ErrorChange(path, "unreadable: " + why));
  }
  auto pair = [&](const std::string& path)
      -> std::pair<std::optional<std::string>, std::optional<std::string>> {
    if (after.unreadable.count(path)) return {std::nullopt, std::nullopt};
    return {FileOf(before, path), after.File(path)};
  };
  using Engine = std::vector<diff::Change> (*)(const std::optional<std::string>&,
                                               const std::optional<std::string>&, std::string_view);
  const std::pair<const char*, Engine> kFileEngines[] = {
      {"config.json", [](const std::optional<std::string>& a, const std::optional<std::string>& b,
                         std::string_view) { return diff::DiffConfig(a, b); }},
      {"generation_config.json",
       [](const std::optional<std::string>& a, const std::optional<std::string>& b,
          std::string_view) { return diff::DiffGenerationConfig(a, b); }},
      {"tokenizer.json", diff::DiffTokenizerJson},
      {"tokenizer_config.json", diff::DiffTokenizerConfig},
      {"special_tokens_map.json", diff::DiffSpecialTokensMap},
      {"added_tokens.json", diff::DiffAddedTokensJson},
  };
  for (const auto& [path, engine] : kFileEngines) {
    auto [a, b] = pair(path);
    if (a != b) Append(out, engine(a, b, path));
  }
  return out;
}

}  // namespace hubwatch::pipeline
