// hubwatch derivatives REPO: the derivatives of a tracked repo (fine-tunes, adapters,
// quantizations, merges) and where each stands on upstream's fixes, as a table or as the JSON of
// GET /api/v1/repos/{ns}/{name}/derivatives.

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "daemon/api/derivatives_json.h"
#include "daemon/cli_common.h"
#include "daemon/commands.h"
#include "tracker/advisory/time_text.h"
#include "tracker/diff/terminal_text.h"

namespace hubwatch::cli {
namespace {

using derivatives::LagStatus;
using diff::EscapeForTerminal;

constexpr size_t kMaxIdColumn = 48;
constexpr size_t kMaxQuoted = 80;  // of upstream text in a message

std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size() + 1, ' ');
}

// The summary of each upstream advisory some derivative lags on ("" when it has none).
Result<std::map<std::string, std::string>> LaggingSummaries(
    store::Store& store, const std::vector<derivatives::DerivativeRecord>& list) {
  std::map<std::string, std::string> out;
  for (const derivatives::DerivativeRecord& d : list) {
    for (const derivatives::AdvisoryLag& lag : d.lags) {
      if (lag.status != LagStatus::kLagging || out.count(lag.advisory_id)) continue;
      Result<std::optional<store::AdvisoryRecord>> a =
          store.advisories().GetAdvisory(lag.advisory_id);
      if (!a.ok()) return a.error();
      std::string& summary = out[lag.advisory_id];
      if (!a->has_value()) continue;
      const auto it = (*a)->osv.find("summary");
      if (it != (*a)->osv.end() && it->is_string()) summary = it->get<std::string>();
    }
  }
  return out;
}

void PrintTable(const std::string& repo, const std::vector<derivatives::DerivativeRecord>& list,
                const store::DerivativeTally& t,
                const std::map<std::string, std::string>& summaries, std::ostream& out) {
  out << "derivatives of " << EscapeForTerminal(repo) << ": " << t.derivatives << " (" << t.checked
      << " checked" << (t.unchecked > 0 ? ", " + std::to_string(t.unchecked) + " unchecked" : "")
      << "): " << t.lagging << " lagging, " << t.fixed << " fixed, " << t.diverged << " diverged, "
      << t.not_applicable << " not applicable\n";
  if (list.empty()) return;
  size_t width = 2;
  for (const derivatives::DerivativeRecord& d : list) {
    width = std::max(width, std::min(kMaxIdColumn, EscapeForTerminal(d.id).size()));
  }
  out << "\n"
      << Pad("ID", width) << "RELATION   HEAD     CHECKED     FIXED  LAGGING  DIVERGED  N/A\n";
  for (const derivatives::DerivativeRecord& d : list) {
    derivatives::LagCounts c;
    for (const derivatives::AdvisoryLag& lag : d.lags) {
      switch (lag.status) {
        case LagStatus::kFixed:
          ++c.fixed;
          break;
        case LagStatus::kLagging:
          ++c.lagging;
          break;
        case LagStatus::kDiverged:
          ++c.diverged;
          break;
        case LagStatus::kNotApplicable:
          ++c.not_applicable;
          break;
      }
    }
    const std::string head = d.head.empty() ? "-" : EscapeForTerminal(d.head.substr(0, 7));
    const std::string checked =
        d.checked_at > 0 ? advisory::Rfc3339(d.checked_at).substr(0, 10) : "never";
    out << Pad(EscapeForTerminal(d.id), width)
        << Pad(std::string(derivatives::RelationName(d.relation)), 10) << Pad(head, 8)
        << Pad(checked, 11) << Pad(std::to_string(c.fixed), 6) << Pad(std::to_string(c.lagging), 8)
        << Pad(std::to_string(c.diverged), 9) << c.not_applicable << "\n";
    if (!d.error.empty()) out << "    error: " << EscapeForTerminal(d.error) << "\n";
    if (!d.current && !d.head.empty()) {
      out << "    unchecked: these statuses predate upstream's newest fix\n";
    }
    for (const derivatives::AdvisoryLag& lag : d.lags) {
      if (lag.status != LagStatus::kLagging) continue;
      const auto summary = summaries.find(lag.advisory_id);
      out << "    lagging: " << EscapeForTerminal(lag.advisory_id)
          << (summary == summaries.end() || summary->second.empty()
                  ? ""
                  : "  " + EscapeForTerminal(summary->second))
          << "\n";
    }
  }
}

int Derivatives(const Args& args, std::ostream& out, std::ostream& err) {
  CommonFlags flags;
  std::vector<std::string> positional;
  if (Status s = ParseCommon(args, flags, positional, {}); !s.ok()) {
    return Fail(err, "derivatives", s);
  }
  if (flags.help) {
    out << "usage: hubwatch derivatives REPO --config FILE [--json]\n\n"
           "The derivatives of a tracked REPO that hubwatch found on the Hub (fine-tunes,\n"
           "adapters, quantizations, merges), by id: relation, the head checked, when, and how\n"
           "many of REPO's behavioral fixes each carries (fixed), still lacks (lagging), replaced\n"
           "with its own content (diverged) or does not ship the files of (N/A), with the\n"
           "summaries of the fixes it lags. A derivative not checked since upstream's newest\n"
           "fix is unchecked: its statuses are not counted. --json prints what GET\n"
           "/api/v1/repos/{ns}/{name}/derivatives serves, with the derivatives no longer\n"
           "followed and why.\n\n"
           "`hubwatch serve` follows the derivatives of the repos whose entry in the\n"
           "configuration's \"repos\" sets \"derivatives\": true (or {\"max\": N,\n"
           "\"relations\": [...]}), once per poll.derivatives_interval_s (3600).\n";
    return 0;
  }
  if (positional.size() != 1) {
    return Fail(err, "derivatives", Error::InvalidInput("needs one REPO"));
  }
  const std::string& repo = positional[0];
  Result<Opened> opened = OpenStoreFromConfig(flags);
  if (!opened.ok()) return Fail(err, "derivatives", opened.error());
  store::Store& store = *opened->store;
  Result<std::optional<store::RepoRecord>> tracked = store.repos().GetRepo(repo);
  if (!tracked.ok()) return Fail(err, "derivatives", tracked.error());
  if (!tracked->has_value()) {
    return Fail(err, "derivatives",
                Error::InvalidInput("repo " + EscapeForTerminal(repo.substr(0, kMaxQuoted)) +
                                    " is not tracked"));
  }
  Result<std::vector<derivatives::DerivativeRecord>> list = store.derivatives().List(repo);
  if (!list.ok()) return Fail(err, "derivatives", list.error());
  Result<store::DerivativeTally> tally = store.derivatives().Tally(repo);
  if (!tally.ok()) return Fail(err, "derivatives", tally.error());
  Result<std::vector<derivatives::Eviction>> evicted =
      store.derivatives().evictions().Recent(repo, store::DerivativeEvictions::kKept);
  if (!evicted.ok()) return Fail(err, "derivatives", evicted.error());
  if (flags.json) {
    out << api::DerivativesJson(repo, *list, *tally, *evicted)
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return 0;
  }
  Result<std::map<std::string, std::string>> summaries = LaggingSummaries(store, *list);
  if (!summaries.ok()) return Fail(err, "derivatives", summaries.error());
  PrintTable(repo, *list, *tally, *summaries, out);
  if (!evicted->empty()) {
    out << "\n" << evicted->size() << " evicted lately (--json says which and why)\n";
  }
  return 0;
}

}  // namespace

int RunDerivatives(const Args& a, std::ostream& o, std::ostream& e) { return Derivatives(a, o, e); }

}  // namespace hubwatch::cli
