#include "daemon/service/derivative_watch.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

#include "daemon/service/metrics.h"

namespace hubwatch::service {
namespace {

using derivatives::AdvisoryLag;
using derivatives::DerivativeCheck;
using derivatives::DerivativeRecord;
using derivatives::LagStatus;

bool SameStatuses(const std::vector<AdvisoryLag>& a, const std::vector<AdvisoryLag>& b) {
  std::map<std::string, LagStatus> left, right;
  for (const AdvisoryLag& lag : a) left[lag.advisory_id] = lag.status;
  for (const AdvisoryLag& lag : b) right[lag.advisory_id] = lag.status;
  return left == right;
}

bool AnyLagging(const std::vector<AdvisoryLag>& lags) {
  return std::any_of(lags.begin(), lags.end(),
                     [](const AdvisoryLag& lag) { return lag.status == LagStatus::kLagging; });
}

// How often to look again while polls keep the watch waiting, and at most between looks.
constexpr int64_t kBusyRetryS = 5;
constexpr int64_t kMaxSleepS = 60;
// Evictions one log line names (the rest are counted; the API lists them).
constexpr size_t kEvictionsLogged = 5;

// "a/b (ranked_out: ranked 207th ...), c/d (not_found: ...) and 3 more"
std::string EvictionsText(const std::vector<derivatives::Eviction>& evicted) {
  std::string text;
  for (size_t i = 0; i < evicted.size() && i < kEvictionsLogged; ++i) {
    const derivatives::Eviction& e = evicted[i];
    text += (i ? ", " : "") + e.id + " (" + std::string(derivatives::EvictionReasonName(e.reason)) +
            ": " + e.detail + ")";
  }
  if (evicted.size() > kEvictionsLogged) {
    text += " and " + std::to_string(evicted.size() - kEvictionsLogged) + " more";
  }
  return text;
}

std::optional<derivatives::Signals> SeenOf(const pipeline::DerivativeRound& round,
                                           const std::string& id) {
  auto it = round.seen.find(id);
  return it == round.seen.end() ? std::nullopt : std::optional(it->second);
}

}  // namespace

DerivativeWatch::DerivativeWatch(Deps deps, Options options)
    : deps_(std::move(deps)), options_(options) {}

DerivativeWatch::~DerivativeWatch() {
  *alive_ = false;
  CancelTimer();
}

void DerivativeWatch::SetRepos(const std::vector<RepoConfig>& repos) {
  std::map<std::string, RepoConfig> followed;
  std::map<std::string, int64_t> next;
  const int64_t now = deps_.clock->UnixSeconds();
  for (const RepoConfig& repo : repos) {
    if (!repo.derivatives.enabled) continue;
    followed[repo.id] = repo;
    auto it = next_round_at_.find(repo.id);
    next[repo.id] = it == next_round_at_.end() ? now : it->second;
  }
  repos_ = std::move(followed);
  next_round_at_ = std::move(next);
  if (!stopped_ && !running_) Arm(0);
}

void DerivativeWatch::Start() { Arm(0); }

void DerivativeWatch::Stop() {
  stopped_ = true;
  *alive_ = false;
  CancelTimer();
}

void DerivativeWatch::CancelTimer() {
  if (timer_) deps_.clock->Cancel(*std::exchange(timer_, std::nullopt));
}

void DerivativeWatch::Arm(int64_t seconds) {
  if (stopped_) return;
  CancelTimer();
  timer_ = deps_.clock->RunAt(deps_.clock->Now() + std::chrono::seconds(seconds), [this] {
    timer_.reset();
    Tick();
  });
}

void DerivativeWatch::Tick() {
  if (stopped_ || running_) return;
  const int64_t now = deps_.clock->UnixSeconds();
  auto due = std::min_element(next_round_at_.begin(), next_round_at_.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  if (due == next_round_at_.end()) return Arm(kMaxSleepS);
  if (due->second > now) return Arm(std::min(due->second - now, kMaxSleepS));
  if (deps_.polls_idle && !deps_.polls_idle()) return Arm(kBusyRetryS);
  StartRound(repos_.at(due->first));
}

void DerivativeWatch::StartRound(const RepoConfig& repo) {
  const std::string upstream = repo.id;
  store::Store& reads = deps_.store->reads();
  // Before the fixes: one published between the two reads is classified, never claimed.
  Result<int64_t> newest = reads.derivatives().NewestFixSeq(upstream);
  Result<std::vector<DerivativeRecord>> stored =
      newest.ok() ? reads.derivatives().List(upstream)
                  : Result<std::vector<DerivativeRecord>>(newest.error());
  Result<std::vector<derivatives::FixFacets>> fixes =
      stored.ok() ? pipeline::LoadFixFacets(reads, upstream)
                  : Result<std::vector<derivatives::FixFacets>>(stored.error());
  if (!fixes.ok()) {
    deps_.log->warn("derivatives of {}: the store could not be read: {}", upstream,
                    fixes.error().message);
    next_round_at_[upstream] = deps_.clock->UnixSeconds() + options_.interval_s;
    return Arm(0);
  }
  pipeline::DerivativeRoundInput input;
  input.upstream = upstream;
  input.relations.assign(repo.derivatives.relations.begin(), repo.derivatives.relations.end());
  input.max = static_cast<size_t>(repo.derivatives.max);
  input.concurrency = options_.concurrency;
  input.follow_budget = options_.follow_budget;
  std::map<std::string, DerivativeRecord> by_id;
  for (DerivativeRecord& record : *stored) {
    if (record.checked_at > 0 && record.error.empty() && !record.facets_json.empty()) {
      input.checked_heads[record.id] = record.head;
    }
    input.known[record.id] = {record.relation, record.signals, record.last_modified,
                              record.listed_at};
    by_id.emplace(record.id, std::move(record));
  }
  running_ = true;
  pipeline::CheckDerivatives(
      *deps_.hub, std::move(input),
      [this, alive = alive_, upstream, fixes = std::move(fixes).value(), newest = *newest,
       by_id = std::move(by_id)](pipeline::DerivativeRound round) mutable {
        if (!*alive) return;
        EndRound(upstream, std::move(fixes), newest, std::move(by_id), std::move(round));
      });
}

void DerivativeWatch::EndRound(const std::string& upstream,
                               std::vector<derivatives::FixFacets> fixes, int64_t fixes_through,
                               std::map<std::string, DerivativeRecord> stored,
                               pipeline::DerivativeRound round) {
  const int64_t now = deps_.clock->UnixSeconds();
  Metrics& metrics = *deps_.metrics;
  if (deps_.spend) deps_.spend(round.requests);
  metrics.counter("hubwatch_derivative_requests_total", "requests sent for derivative rounds")
      .Add(static_cast<uint64_t>(round.requests));
  auto finish = [this, upstream, now] {
    running_ = false;
    // A reload during the round may have dropped the repo: it is not scheduled again.
    if (repos_.count(upstream)) next_round_at_[upstream] = now + options_.interval_s;
    Arm(0);
  };
  if (round.listing_error) {
    metrics
        .counter("hubwatch_derivative_rounds_total", "derivative rounds", {{"outcome", "failed"}})
        .Add();
    deps_.log->warn("derivatives of {}: the listing failed: {}", upstream,
                    round.listing_error->ToString());
    return finish();
  }
  std::vector<DerivativeCheck> checks;
  int failed = 0;
  size_t lagging = 0;
  for (pipeline::DerivativeRead& read : round.reads) {
    DerivativeCheck check;
    check.upstream = upstream;
    check.id = read.id;
    check.relation = read.relation;
    check.head = read.head;
    check.last_modified = read.last_modified;
    check.checked_at = now;
    check.signals = read.signals;
    if (read.facets) {
      check.facets_json = derivatives::FacetsToJson(*read.facets);
      check.lags = pipeline::LagsOf(fixes, *read.facets);
      check.fixes_through = fixes_through;
      lagging += AnyLagging(check.lags);
    } else {
      check.error = read.error;
      ++failed;
      deps_.log->warn("derivatives of {}: {} at {} could not be read: {}", upstream, read.id,
                      read.head.substr(0, 12), read.error);
    }
    metrics
        .counter("hubwatch_derivative_reads_total", "derivatives read at a new head",
                 {{"outcome", read.facets ? "ok" : "failed"}})
        .Add();
    checks.push_back(std::move(check));
  }
  std::vector<store::DerivativeSighting> unchanged;
  for (const std::string& id : round.unchanged) {
    const DerivativeRecord& record = stored.at(id);
    Result<derivatives::FacetSet> facets = derivatives::FacetsFromJson(record.facets_json);
    std::vector<AdvisoryLag> lags =
        facets.ok() ? pipeline::LagsOf(fixes, *facets) : record.lags;  // unreadable: as stored
    // Only classified facets cover the fixes; stored lags kept as they were cover what they did.
    const std::optional<int64_t> through =
        facets.ok() ? std::optional(fixes_through) : std::nullopt;
    lagging += AnyLagging(lags);
    if (SameStatuses(lags, record.lags)) {
      unchanged.push_back({id, SeenOf(round, id), through});
      continue;
    }
    DerivativeCheck check;
    check.upstream = upstream;
    check.id = id;
    check.relation = record.relation;
    check.head = record.head;
    check.last_modified = record.last_modified;
    check.checked_at = now;
    check.facets_json = record.facets_json;
    check.lags = std::move(lags);
    check.signals = SeenOf(round, id);
    check.fixes_through = through;
    checks.push_back(std::move(check));
  }
  const std::string counts = fmt::format(
      "{} listed, {} read at a new head ({} failed), {} followed by their own request ({} "
      "deferred), {} evicted, {} not admitted, {} lagging; {} requests",
      round.listed.size(), round.reads.size(), failed, round.followed, round.deferred,
      round.evicted.size(), round.not_admitted, lagging, round.requests);
  const std::string evictions = EvictionsText(round.evicted);
  deps_.store->Write(
      [upstream, checks = std::move(checks), unchanged = std::move(unchanged),
       evicted = std::move(round.evicted), now, targets = targets_](store::Store& w) -> Status {
        for (const DerivativeCheck& check : checks) {
          if (Status s = w.derivatives().RecordCheck(check, now, targets); !s.ok()) return s;
        }
        if (Status s = w.derivatives().MarkListed(upstream, unchanged, now); !s.ok()) return s;
        return w.derivatives().evictions().Evict(upstream, evicted, now);
      },
      [this, alive = alive_, upstream, counts, evictions, lagging, finish](Status status) {
        if (!*alive) return;
        Metrics& metrics = *deps_.metrics;
        const bool ok = status.ok();
        metrics
            .counter("hubwatch_derivative_rounds_total", "derivative rounds",
                     {{"outcome", ok ? "ok" : "failed"}})
            .Add();
        if (!ok) {
          deps_.log->error("derivatives of {}: the round could not be stored: {}", upstream,
                           status.error().message);
          return finish();
        }
        metrics
            .gauge("hubwatch_derivatives_lagging",
                   "derivatives lagging on at least one upstream fix", {{"repo", upstream}})
            .Set(static_cast<double>(lagging));
        deps_.log->info("derivatives of {}: {}{}", upstream, counts,
                        evictions.empty() ? "" : "; evicted " + evictions);
        if (deps_.published) deps_.published();
        finish();
      });
}

}  // namespace hubwatch::service
