#include "tracker/advisory/osv.h"

#include <openssl/sha.h>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <vector>

#include "estimator/base/text.h"
#include "tracker/diff/json_text.h"

namespace hubwatch::advisory {
namespace {

constexpr size_t kMaxSummary = 120;
constexpr size_t kMaxDetailsDiff = 64 * 1024;  // of diff text in details; the rest is elided
// Rendered-prompt diffs of a chat-template change shown in details: the first few, each cut to
// a few lines; the rest stay in database_specific.diff.rendered.
constexpr size_t kMaxRenderedDiffs = 3;
constexpr size_t kMaxRenderedDiffLines = 40;
constexpr size_t kMaxRenderedDiffBytes = 6 * 1024;
constexpr size_t kMaxRenderedLineBytes = 400;
constexpr size_t kMaxRenderError = 200;

std::string What(diff::ChangeKind kind) {
  switch (kind) {
    case diff::ChangeKind::kConfig:
      return "config changed";
    case diff::ChangeKind::kGenerationConfig:
      return "generation config changed";
    case diff::ChangeKind::kTokenizer:
      return "tokenizer changed";
    case diff::ChangeKind::kChatTemplate:
      return "chat template changed";
    case diff::ChangeKind::kSpecialTokens:
      return "special tokens changed";
    case diff::ChangeKind::kWeights:
      return "weights changed";
    case diff::ChangeKind::kFiles:
      return "files changed";
    case diff::ChangeKind::kProcessor:
      return "processor config changed";
    case diff::ChangeKind::kEstimate:
      return "memory estimate changed";
    case diff::ChangeKind::kHistory:
      return "history rewritten";
    case diff::ChangeKind::kError:
      return "unreadable file";
  }
  return "changed";
}

std::string ShortSha(const std::string& sha) { return sha.substr(0, 7); }

// Indented JSON for the Markdown; invalid UTF-8 replaced, never an exception.
std::string Pretty(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A fenced block that cannot be closed early by the text it holds.
std::string Fence(const std::string& text, const char* language) {
  std::string fence = "```";
  while (text.find(fence) != std::string::npos) fence += '`';
  return fence + language + "\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") +
         fence + "\n";
}

// text cut to at most max bytes (and then "..."), never inside a UTF-8 sequence.
std::string Cut(std::string text, size_t max) {
  if (text.size() <= max) return text;
  size_t n = max - 3;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n) + "...";
}

// The first lines of a unified diff: at most kMaxRenderedDiffLines lines and
// kMaxRenderedDiffBytes bytes, each line cut to kMaxRenderedLineBytes.
std::string HeadOfDiff(const std::string& diff) {
  std::string out;
  size_t lines = 0, pos = 0;
  while (pos < diff.size()) {
    size_t end = diff.find('\n', pos);
    end = end == std::string::npos ? diff.size() : end + 1;
    std::string line = diff.substr(pos, end - pos);
    if (line.size() > kMaxRenderedLineBytes) {
      line = Cut(line, kMaxRenderedLineBytes) + " (line cut)\n";
    }
    if (lines == kMaxRenderedDiffLines || out.size() + line.size() > kMaxRenderedDiffBytes) break;
    out += line;
    ++lines;
    pos = end;
  }
  if (pos < diff.size()) {
    size_t more = diff.back() == '\n' ? 0 : 1;
    for (size_t i = pos; i < diff.size(); ++i) more += diff[i] == '\n';
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += "... (" + std::to_string(more) + " more lines)\n";
  }
  return out;
}

// What a chat-template change does to rendered prompts (details["rendered"], as the pipeline
// writes it): the count, the unified diffs of the first kMaxRenderedDiffs changed prompts, each
// labelled with its conversation, and every change to or from a render error. "" when the change
// carries no rendered comparison.
std::string RenderedPrompts(const nlohmann::json& rendered) {
  if (!rendered.is_object()) return "";
  const auto list = rendered.find("conversations");
  if (list == rendered.end() || !list->is_array()) return "";
  std::vector<const nlohmann::json*> diffs, errors;
  for (const nlohmann::json& c : *list) {
    if (!c.is_object() || !c.value("changed", false)) continue;
    (c.value("unified_diff", "").empty() ? errors : diffs).push_back(&c);
  }
  const size_t changed = diffs.size() + errors.size();
  std::string md = "\nRendered prompts: " + std::to_string(changed) + " of " +
                   std::to_string(list->size()) + " canonical conversations changed" +
                   (changed ? ".\n" : " (the template edit does not change any prompt).\n");
  for (size_t i = 0; i < diffs.size() && i < kMaxRenderedDiffs; ++i) {
    md += "\nConversation `" + diffs[i]->value("conversation", "?") + "`:\n\n" +
          Fence(HeadOfDiff(diffs[i]->value("unified_diff", "")), "diff");
  }
  if (!errors.empty()) md += "\n";
  for (const nlohmann::json* c : errors) {
    const std::string before = c->value("before_error", ""), after = c->value("after_error", "");
    md += "- conversation `" + c->value("conversation", "?") + "`: " +
          (after.empty() ? "renders now; before: " + Cut(before, kMaxRenderError)
                         : "no longer renders: " + Cut(after, kMaxRenderError)) +
          "\n";
  }
  if (diffs.size() > kMaxRenderedDiffs) {
    md += "\n" + std::to_string(diffs.size() - kMaxRenderedDiffs) +
          " more changed prompt diffs omitted; all are in database_specific.diff.rendered.\n";
  }
  return md;
}

std::string Details(const diff::Change& c, const AdvisoryContext& ctx) {
  std::string md = "**" + What(c.kind) + "** in `" + ctx.repo + "` at revision `" + ctx.revision +
                   "`" + (ctx.parent.empty() ? "" : " (parent `" + ctx.parent + "`)") + ".\n\n";
  md += "- impact: **" + std::string(diff::ImpactName(c.impact)) + "**\n";
  if (!c.path.empty()) md += "- file: `" + c.path + "`\n";
  md += "- " + c.summary + "\n\n";
  std::string diff_text;
  if (c.details.is_object()) {
    for (const char* key : {"unified_diff", "diff"}) {
      auto it = c.details.find(key);
      if (it != c.details.end() && it->is_string()) diff_text = it->get<std::string>();
    }
  }
  if (!diff_text.empty()) {
    if (diff_text.size() > kMaxDetailsDiff) {
      diff_text = Cut(diff_text, kMaxDetailsDiff) +
                  "\n... (truncated; the full diff is in database_specific.diff)\n";
    }
    md += Fence(diff_text, "diff");
  } else {
    std::string json = Pretty(c.details);
    if (json.size() > kMaxDetailsDiff) {
      json = Cut(json, kMaxDetailsDiff) + "\n... (truncated; see database_specific.diff)";
    }
    md += Fence(json, "json");
  }
  if (c.kind == diff::ChangeKind::kChatTemplate && c.details.is_object()) {
    const auto rendered = c.details.find("rendered");
    if (rendered != c.details.end()) md += RenderedPrompts(*rendered);
  }
  if (ctx.estimate_delta)
    md += "\nMemory estimate delta:\n\n" + Fence(Pretty(*ctx.estimate_delta), "json");
  md += "\nSee " + ctx.hub_url + "/" + ctx.repo + "/commit/" + ctx.revision + "\n";
  return md;
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

std::string AdvisoryId(std::string_view repo, std::string_view revision, diff::ChangeKind kind,
                       std::string_view path, int ordinal) {
  const std::string key = std::string(repo) + "\n" + std::string(revision) + "\n" +
                          std::string(diff::KindName(kind)) + "\n" + std::string(path) + "\n" +
                          std::to_string(ordinal);
  return IdOfKey(key);
}

std::string IdOfKey(std::string_view key) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  return kIdPrefix + HexLower({reinterpret_cast<const char*>(digest), 8});
}

std::string Consequence(const diff::Change& c) {
  const auto leads = [&](std::string_view key) {
    return c.summary.rfind(key, 0) == 0 && c.summary.size() > key.size() &&
           (c.summary[key.size()] == ' ' || c.summary[key.size()] == ':');
  };
  using diff::ChangeKind;
  switch (c.kind) {
    case ChangeKind::kConfig:
    case ChangeKind::kGenerationConfig:
      if (c.impact == diff::Impact::kBreaking) break;
      if (leads("eos_token_id")) return "generation may stop at other tokens";
      if (leads("bos_token_id")) return "prompts may start with another token";
      if (leads("pad_token_id")) return "padded batches may change";
      if (leads("rope_scaling") || leads("rope_theta") || leads("max_position_embeddings")) {
        return "long-context outputs change";
      }
      if (leads("torch_dtype") || leads("dtype")) return "loads in another dtype";
      if (c.kind == ChangeKind::kGenerationConfig) return "generation defaults change";
      break;
    case ChangeKind::kChatTemplate:
      return "prompts render differently";
    case ChangeKind::kSpecialTokens:
      return "BOS/EOS/PAD resolve differently";
    case ChangeKind::kTokenizer:
      return "text may tokenize differently";
    case ChangeKind::kProcessor:
      return "inputs are preprocessed differently";
    case ChangeKind::kWeights:
      if (c.impact == diff::Impact::kBreaking) return "tensors added, removed or reshaped";
      return "weights differ: outputs change";
    case ChangeKind::kEstimate:
      return "memory needs moved";
    case ChangeKind::kHistory:
      return "pinned revisions may be gone";
    case ChangeKind::kError:
      return "a file cannot be read";
    case ChangeKind::kFiles:
      break;
  }
  switch (c.impact) {
    case diff::Impact::kBreaking:
      return "may no longer load as before";
    case diff::Impact::kBehavioral:
      return "outputs may differ";
    case diff::Impact::kCosmetic:
      return "no effect on outputs";
  }
  return "changed";
}

std::string AdvisorySummary(const diff::Change& change, const AdvisoryContext& ctx) {
  const size_t slash = ctx.repo.find('/');
  const std::string name = slash == std::string::npos ? ctx.repo : ctx.repo.substr(slash + 1);
  const std::string place = diff::OneLine(" (" + name + "@" + ShortSha(ctx.revision) + ")");
  const std::string meaning = ": " + Consequence(change);
  const std::string lead =
      diff::OneLine(change.summary.empty() ? What(change.kind) : change.summary);
  // The difference first; what it means when there is room for it; the place always, unless
  // the repo name alone is longer than the summary may be.
  if (lead.size() + meaning.size() + place.size() <= kMaxSummary) return lead + meaning + place;
  if (place.size() + 20 > kMaxSummary) return diff::CutText(lead + place, kMaxSummary);
  return diff::CutText(lead, kMaxSummary - place.size()) + place;
}

nlohmann::json BuildOsv(const diff::Change& change, const AdvisoryContext& ctx) {
  const diff::Change c = diff::BoundChange(change);  // as the store keeps it
  const std::string model_url = ctx.hub_url + "/" + ctx.repo;
  const std::string commit_url = model_url + "/commit/" + ctx.revision;
  nlohmann::json specific = {
      {"repo", ctx.repo},
      {"revision", ctx.revision},
      {"parent", ctx.parent},
      {"kind", diff::KindName(c.kind)},
      {"impact", diff::ImpactName(c.impact)},
      {"path", c.path},
      {"change", c.summary},
      {"purl", "pkg:huggingface/" + ctx.repo + "@" + Lower(ctx.revision)},
      {"diff", c.details},
  };
  if (!ctx.committed_at.empty()) specific["committed_at"] = ctx.committed_at;
  if (ctx.estimate_delta) specific["estimate_delta"] = *ctx.estimate_delta;
  if (ctx.backfill) specific["backfill"] = true;
  return {
      {"schema_version", kOsvSchemaVersion},
      {"id", AdvisoryId(ctx.repo, ctx.revision, c.kind, c.path, ctx.ordinal)},
      {"modified", ctx.modified},
      {"published", ctx.published},
      {"summary", AdvisorySummary(c, ctx)},
      {"details", Details(c, ctx)},
      {"affected",
       {{{"ranges",
          {{{"type", "GIT"},
            {"repo", model_url},
            {"events",
             {{{"introduced", ctx.introduced.empty() ? "0" : ctx.introduced}},
              {{"fixed", ctx.revision}}}}}}}}}},
      {"references",
       {{{"type", "FIX"}, {"url", commit_url}}, {{"type", "PACKAGE"}, {"url", model_url}}}},
      {"credits", {{{"name", "hubwatch"}, {"type", "TOOL"}}}},
      {"database_specific", std::move(specific)},
  };
}

}  // namespace hubwatch::advisory
