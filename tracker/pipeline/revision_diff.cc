#include "tracker/pipeline/revision_diff.h"

#include <nlohmann/json.hpp>

#include "tracker/chat_template/render_diff.h"
#include "tracker/chat_template/tokenizer_config.h"
#include "tracker/diff/chat_template_diff.h"
#include "tracker/diff/config_diff.h"
#include "tracker/diff/files_diff.h"
#include "tracker/diff/special_tokens.h"
#include "tracker/diff/tokenizer_diff.h"
#include "tracker/diff/weights_diff.h"

namespace hubwatch::pipeline {
namespace {

using OptionalText = std::optional<std::string>;

// The contents the engines compare. An unreadable file counts as unchanged (its error change
// says what happened), so it is neither "removed" nor "changed" by accident.
struct Sides {
  const Snapshot* before;
  const Snapshot& after;

  OptionalText Before(const std::string& path) const {
    return before ? before->File(path) : std::nullopt;
  }
  OptionalText After(const std::string& path) const {
    return after.unreadable.count(path) ? Before(path) : after.File(path);
  }
};

void Append(std::vector<diff::Change>& out, std::vector<diff::Change> more) {
  for (diff::Change& c : more) out.push_back(std::move(c));
}

// The special tokens a template sees, from its revision's tokenizer_config.json.
chat_template::TemplateRevision RenderInput(const diff::ChatTemplate& t,
                                            const OptionalText& config) {
  chat_template::TemplateRevision revision{t.text, {}};
  if (!config) return revision;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(*config, nullptr, false);
  if (!j.is_object()) return revision;
  j["chat_template"] = t.text;  // whichever file the template came from
  Result<chat_template::TemplateRevision> parsed = chat_template::TemplateFromTokenizerConfig(j);
  return parsed.ok() ? std::move(parsed).value() : revision;
}

// Renders both templates on the canonical conversations (transformers' variables, a fixed
// clock) and reports which prompts changed.
std::optional<diff::RenderedComparison> CompareRendered(const diff::TemplateRevisions& t) {
  const chat_template::TemplateRenderDiff d =
      chat_template::DiffRenderedPrompts(RenderInput(t.before, t.before_files.tokenizer_config),
                                         RenderInput(t.after, t.after_files.tokenizer_config));
  diff::RenderedComparison r;
  r.impact = d.impact == chat_template::Impact::kBehavioral ? diff::Impact::kBehavioral
                                                            : diff::Impact::kCosmetic;
  r.summary = std::to_string(d.changed_count()) + " of " + std::to_string(d.conversations.size()) +
              " canonical prompts changed";
  nlohmann::json conversations = nlohmann::json::array();
  for (const chat_template::ConversationDiff& c : d.conversations) {
    nlohmann::json j = {{"conversation", c.conversation}, {"changed", c.changed}};
    if (!c.before.ok) j["before_error"] = c.before.error.message;
    if (!c.after.ok) j["after_error"] = c.after.error.message;
    if (!c.unified_diff.empty()) j["unified_diff"] = c.unified_diff;
    conversations.push_back(std::move(j));
  }
  r.details = {{"impact", chat_template::ImpactName(d.impact)},
               {"changed", d.changed_count()},
               {"conversations", std::move(conversations)},
               {"report", chat_template::FormatRenderDiff(d)}};
  return r;
}

}  // namespace

std::vector<diff::Change> DiffSnapshots(const Snapshot* before, const Snapshot& after) {
  const Sides s{before, after};
  std::vector<diff::Change> out;
  for (const auto& [path, why] : after.unreadable) {
    out.push_back(diff::ErrorChange(path, "unreadable: " + why));
  }

  using Engine =
      std::vector<diff::Change> (*)(const OptionalText&, const OptionalText&, std::string_view);
  const std::pair<const char*, Engine> kFileEngines[] = {
      {"config.json", [](const OptionalText& a, const OptionalText& b,
                         std::string_view) { return diff::DiffConfig(a, b); }},
      {"generation_config.json", [](const OptionalText& a, const OptionalText& b,
                                    std::string_view) { return diff::DiffGenerationConfig(a, b); }},
      {"tokenizer.json", diff::DiffTokenizerJson},
      {"tokenizer_config.json", diff::DiffTokenizerConfig},
      {"special_tokens_map.json", diff::DiffSpecialTokensMap},
      {"added_tokens.json", diff::DiffAddedTokensJson},
  };
  for (const auto& [path, engine] : kFileEngines) {
    OptionalText a = s.Before(path), b = s.After(path);
    if (a != b) Append(out, engine(a, b, path));
  }

  auto templates = [&](auto side) {
    return diff::ChatTemplateFiles{(s.*side)("tokenizer_config.json"),
                                   (s.*side)("chat_template.jinja"),
                                   (s.*side)("chat_template.json")};
  };
  diff::ChatTemplateDiffOptions template_options;
  template_options.compare_rendered = CompareRendered;
  Append(out, diff::DiffChatTemplates(templates(&Sides::Before), templates(&Sides::After),
                                      template_options));

  auto tokens = [&](auto side) {
    return diff::SpecialTokenFiles{(s.*side)("config.json"), (s.*side)("generation_config.json"),
                                   (s.*side)("tokenizer_config.json"),
                                   (s.*side)("special_tokens_map.json"),
                                   (s.*side)("tokenizer.json")};
  };
  Append(out, diff::DiffSpecialTokens(tokens(&Sides::Before), tokens(&Sides::After)));

  diff::HeadersBySha256 headers;
  diff::IndexFiles before_indexes, after_indexes;
  auto collect = [&](const Snapshot& snap, diff::IndexFiles& indexes) {
    for (const auto& [id, h] : snap.headers) headers.emplace(id, h);
    for (const auto& [path, content] : snap.files) {
      if (path.size() > 11 && path.compare(path.size() - 11, 11, ".index.json") == 0) {
        indexes.emplace(path, content);
      }
    }
  };
  if (before) collect(*before, before_indexes);
  collect(after, after_indexes);
  Append(out, diff::DiffWeights(before ? before->manifest : diff::Manifest{}, after.manifest,
                                headers, before_indexes, after_indexes));
  return out;
}

}  // namespace hubwatch::pipeline
