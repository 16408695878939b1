#include "tracker/advisory/derivative_osv.h"

#include <algorithm>
#include <vector>

#include "estimator/base/text.h"
#include "tracker/advisory/osv.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::advisory {
namespace {

using derivatives::LagStatus;
using derivatives::Relation;

constexpr size_t kMaxSummary = 120;
constexpr size_t kMaxQuoted = 2000;  // of upstream text quoted in details

// text cut to at most max bytes, "..." included, never inside a UTF-8 sequence.
std::string Cut(const std::string& text, size_t max) {
  return text.size() <= max ? text : Clip(text, max - 3);
}

// One line: control characters (a newline, an escape) become spaces.
std::string OneLine(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

// Upstream text as literal Markdown: on one line, every ASCII punctuation character that
// Markdown or inline HTML could act on backslash-escaped.
std::string MarkdownText(const std::string& text) {
  std::string out;
  for (char c : OneLine(Cut(text, kMaxQuoted))) {
    if (std::string_view("\\`*_{}[]()#+-!<>|~&=:\"'").find(c) != std::string_view::npos) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

// Upstream text as a Markdown code span that nothing in it can close early.
std::string Code(const std::string& text) {
  const std::string line = OneLine(Cut(text, kMaxQuoted));
  size_t longest = 0, run = 0;
  for (char c : line) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !line.empty() && (line.front() == '`' || line.back() == '`' ||
                                     line.front() == ' ' || line.back() == ' ');
  return fence + (pad ? " " : "") + line + (pad ? " " : "") + fence;
}

// A repo id or path in a URL path: everything but unreserved characters and '/' escaped.
std::string UrlPath(const std::string& text) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        std::string_view("-._~/").find(ch) != std::string_view::npos) {
      out += ch;
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    }
  }
  return out;
}

std::string RelationPhrase(Relation relation) {
  switch (relation) {
    case Relation::kFinetune:
      return "a fine-tune";
    case Relation::kAdapter:
      return "an adapter";
    case Relation::kQuantized:
      return "a quantization";
    case Relation::kMerge:
      return "a merge";
  }
  return "a derivative";
}

// The upstream files a fix is about: its path, else those its kind spans.
std::vector<std::string> FixFiles(const derivatives::UpstreamFix& fix) {
  if (!fix.path.empty()) return {fix.path};
  if (fix.kind == "config") return {"config.json"};
  if (fix.kind == "generation_config") return {"generation_config.json"};
  if (fix.kind == "tokenizer") return {"tokenizer.json"};
  if (fix.kind == "chat_template") return {"tokenizer_config.json"};
  return {"tokenizer_config.json", "special_tokens_map.json", "tokenizer.json",
          "generation_config.json"};
}

std::string Summary(const DerivativeAdvisoryContext& ctx) {
  const std::string& d = ctx.derivative;
  const std::string& u = ctx.upstream;
  std::string s;
  switch (ctx.status) {
    case LagStatus::kLagging:
      s = d + " still ships what " + u + " fixed";
      break;
    case LagStatus::kFixed:
      s = d + " caught up with what " + u + " fixed";
      break;
    case LagStatus::kDiverged:
      s = d + " diverged from what " + u + " fixed";
      break;
    case LagStatus::kNotApplicable:
      s = d + " no longer ships what " + u + " fixed";
      break;
  }
  if (!ctx.fix.summary.empty()) s += ": " + ctx.fix.summary;
  return Cut(OneLine(s), kMaxSummary);
}

std::string Details(const DerivativeAdvisoryContext& ctx) {
  const std::string d = Code(ctx.derivative), u = Code(ctx.upstream);
  const std::string rev = Code(ctx.fix.sha), head = Code(ctx.head);
  std::string md = d + " is " + RelationPhrase(ctx.relation) + " of " + u + ". ";
  switch (ctx.status) {
    case LagStatus::kLagging:
      md += "At head " + head + " it still ships what " + u + " replaced in revision " + rev +
            ", which upstream since fixed:";
      break;
    case LagStatus::kFixed:
      md += "It caught up: head " + head + " carries what " + u + " fixed in revision " + rev + ":";
      break;
    case LagStatus::kDiverged:
      md += "Head " + head + " no longer ships what " + u + " replaced in revision " + rev +
            ", nor upstream's fix, but content of its own; review it against the fix:";
      break;
    case LagStatus::kNotApplicable:
      md +=
          "Head " + head + " no longer ships the file(s) " + u + " fixed in revision " + rev + ":";
      break;
  }
  md +=
      "\n\n> " + MarkdownText(ctx.fix.summary.empty() ? "(no summary)" : ctx.fix.summary) + "\n\n";
  md += "- status: **" + std::string(derivatives::LagStatusName(ctx.status)) + "** (checked " +
        Rfc3339(ctx.checked_at) + ")\n";
  md += "- upstream advisory: " + Code(ctx.fix.advisory_id) +
        (ctx.impact.empty() ? "" : " (impact: " + MarkdownText(ctx.impact) + ")") + "\n";
  md += "- upstream fix: revision " + rev + " of " + u +
        (ctx.fix.parent_sha.empty() ? "" : " (parent " + Code(ctx.fix.parent_sha) + ")") + "\n";
  const std::vector<std::string> files = FixFiles(ctx.fix);
  std::string named;
  for (const std::string& f : files) named += (named.empty() ? "" : ", ") + Code(f);
  md += "- file" + std::string(files.size() > 1 ? "s" : "") + ": " + named + "\n";
  if (ctx.status == LagStatus::kLagging || ctx.status == LagStatus::kDiverged) {
    md += "\n**How to fix:** copy " + named + " from " + u + " at revision " + rev + " into " + d +
          ", replacing its own copy";
    md += files.size() > 1 ? "."
                           : " (" + ctx.hub_url + "/" + UrlPath(ctx.upstream) + "/blob/" +
                                 UrlPath(ctx.fix.sha) + "/" + UrlPath(files[0]) + ").";
    if (ctx.relation == Relation::kQuantized) {
      md +=
          " A GGUF file carries these settings in its header: convert it again from that "
          "revision, or set the same values in its metadata.";
    }
    md += "\n";
  }
  return md;
}

}  // namespace

std::string DerivativeAdvisoryId(std::string_view derivative, std::string_view upstream_advisory) {
  const std::string key =
      "derivative\n" + std::string(derivative) + "\n" + std::string(upstream_advisory);
  return IdOfKey(key);
}

nlohmann::json BuildDerivativeOsv(const DerivativeAdvisoryContext& ctx) {
  const std::string model_url = ctx.hub_url + "/" + UrlPath(ctx.derivative);
  const std::string upstream_url = ctx.hub_url + "/" + UrlPath(ctx.upstream);
  nlohmann::json events = nlohmann::json::array();
  events.push_back(nlohmann::json::object({{"introduced", "0"}}));
  if (ctx.status != LagStatus::kLagging) {
    events.push_back(nlohmann::json::object({{"fixed", ctx.head}}));
  }
  nlohmann::json references = {
      {{"type", "PACKAGE"}, {"url", model_url}},
      {{"type", "FIX"}, {"url", upstream_url + "/commit/" + UrlPath(ctx.fix.sha)}},
  };
  if (!ctx.advisory_base_url.empty()) {
    references.push_back({{"type", "ADVISORY"},
                          {"url", ctx.advisory_base_url + "/" + UrlPath(ctx.fix.advisory_id)}});
  }
  nlohmann::json specific = {
      {"derivative", ctx.derivative},
      {"relation", derivatives::RelationName(ctx.relation)},
      {"upstream", ctx.upstream},
      {"upstream_advisory", ctx.fix.advisory_id},
      {"upstream_revision", ctx.fix.sha},
      {"upstream_parent", ctx.fix.parent_sha},
      {"kind", ctx.fix.kind},
      {"path", ctx.fix.path},
      {"status", derivatives::LagStatusName(ctx.status)},
      {"head", ctx.head},
      {"checked_at", Rfc3339(ctx.checked_at)},
  };
  if (!ctx.impact.empty()) specific["impact"] = ctx.impact;
  return {
      {"schema_version", kOsvSchemaVersion},
      {"id", DerivativeAdvisoryId(ctx.derivative, ctx.fix.advisory_id)},
      {"modified", ctx.modified},
      {"published", ctx.published},
      {"related", nlohmann::json::array({ctx.fix.advisory_id})},
      {"summary", Summary(ctx)},
      {"details", Details(ctx)},
      {"affected",
       {{{"ranges", {{{"type", "GIT"}, {"repo", model_url}, {"events", std::move(events)}}}}}}},
      {"references", std::move(references)},
      {"credits", {{{"name", "hubwatch"}, {"type", "TOOL"}}}},
      {"database_specific", std::move(specific)},
  };
}

std::optional<derivatives::LagStatus> DerivativeOsvStatus(const nlohmann::json& osv) {
  if (!osv.is_object()) return std::nullopt;
  const auto specific = osv.find("database_specific");
  if (specific == osv.end() || !specific->is_object()) return std::nullopt;
  const auto status = specific->find("status");
  if (status == specific->end() || !status->is_string()) return std::nullopt;
  return derivatives::ParseLagStatus(status->get<std::string>());
}

}  // namespace hubwatch::advisory
