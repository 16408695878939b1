#include "tracker/advisory/osv.h"

#include <openssl/sha.h>

#include <cctype>
#include <cstdio>
#include <ctime>

namespace hubwatch::advisory {
namespace {

constexpr size_t kMaxSummary = 120;
constexpr size_t kMaxDetailsDiff = 64 * 1024;  // of diff text in details; the rest is elided

std::string Hex(const unsigned char* bytes, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

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

// A fenced block that cannot be closed early by the text it holds.
std::string Fence(const std::string& text, const char* language) {
  std::string fence = "```";
  while (text.find(fence) != std::string::npos) fence += '`';
  return fence + language + "\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") +
         fence + "\n";
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
      diff_text.resize(kMaxDetailsDiff);
      diff_text += "\n... (truncated; the full diff is in database_specific.diff)\n";
    }
    md += Fence(diff_text, "diff");
  } else {
    std::string json = c.details.dump(2);
    if (json.size() > kMaxDetailsDiff) {
      json.resize(kMaxDetailsDiff);
      json += "\n... (truncated; see database_specific.diff)";
    }
    md += Fence(json, "json");
  }
  if (ctx.estimate_delta)
    md += "\nMemory estimate delta:\n\n" + Fence(ctx.estimate_delta->dump(2), "json");
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
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  return kIdPrefix + Hex(digest, 8);
}

std::string AdvisorySummary(const diff::Change& change, const AdvisoryContext& ctx) {
  std::string s = What(change.kind) + " in " + ctx.repo + " at " + ShortSha(ctx.revision);
  if (s.size() > kMaxSummary) s = s.substr(0, kMaxSummary - 3) + "...";
  return s;
}

nlohmann::json BuildOsv(const diff::Change& c, const AdvisoryContext& ctx) {
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
  if (ctx.estimate_delta) specific["estimate_delta"] = *ctx.estimate_delta;
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

std::string Rfc3339(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace hubwatch::advisory
