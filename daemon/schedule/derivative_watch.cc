#include "daemon/schedule/derivative_watch.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "daemon/service/metrics.h"

namespace hubwatch::schedule {
namespace {

// How often to look again while polls keep the watch waiting, and at most between looks.
constexpr int64_t kBusyRetryS = 5;
constexpr int64_t kMaxSleepS = 60;

}  // namespace

DerivativeWatch::DerivativeWatch(Deps deps, Options options)
    : deps_(std::move(deps)), options_(options) {}

DerivativeWatch::~DerivativeWatch() {
  *alive_ = false;
  CancelTimer();
}

void DerivativeWatch::SetRepos(const std::vector<config::RepoConfig>& repos) {
  std::map<std::string, config::RepoConfig> followed;
  std::map<std::string, int64_t> next;
  const int64_t now = deps_.clock->UnixSeconds();
  for (const config::RepoConfig& repo : repos) {
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

void DerivativeWatch::StartRound(const config::RepoConfig& repo) {
  const std::string upstream = repo.id;
  pipeline::DerivativeRoundSettings settings;
  settings.relations.assign(repo.derivatives.relations.begin(), repo.derivatives.relations.end());
  settings.max = static_cast<size_t>(repo.derivatives.max);
  settings.concurrency = options_.concurrency;
  settings.follow_budget = options_.follow_budget;
  Result<pipeline::PreparedDerivativeRound> prepared =
      pipeline::PrepareDerivativeRound(deps_.store->reads(), upstream, settings);
  if (!prepared.ok()) {
    deps_.log->warn("derivatives of {}: the store could not be read: {}", upstream,
                    prepared.error().message);
    next_round_at_[upstream] = deps_.clock->UnixSeconds() + options_.interval_s;
    return Arm(0);
  }
  running_ = true;
  auto shared = std::make_shared<pipeline::PreparedDerivativeRound>(std::move(prepared).value());
  pipeline::DerivativeRoundInput input = shared->input;
  pipeline::CheckDerivatives(*deps_.hub, std::move(input),
                             [this, alive = alive_, shared](pipeline::DerivativeRound round) {
                               if (!*alive) return;
                               EndRound(*shared, std::move(round));
                             });
}

void DerivativeWatch::EndRound(const pipeline::PreparedDerivativeRound& prepared,
                               pipeline::DerivativeRound round) {
  const std::string& upstream = prepared.input.upstream;
  const int64_t now = deps_.clock->UnixSeconds();
  service::Metrics& metrics = *deps_.metrics;
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
  const size_t reads = round.reads.size();
  auto classified = std::make_shared<const pipeline::ClassifiedDerivativeRound>(
      pipeline::ClassifyDerivativeRound(prepared, std::move(round), now));
  for (const pipeline::FailedDerivativeRead& f : classified->failed) {
    deps_.log->warn("derivatives of {}: {} at {} could not be read: {}", upstream, f.id,
                    f.head.substr(0, 12), f.error);
  }
  const size_t failed = classified->failed.size();
  for (const auto& [outcome, count] : {std::pair{"ok", reads - failed}, {"failed", failed}}) {
    if (count == 0) continue;
    metrics
        .counter("hubwatch_derivative_reads_total", "derivatives read at a new head",
                 {{"outcome", outcome}})
        .Add(count);
  }
  deps_.store->Write(
      [upstream, classified, now, targets = targets_](store::Store& w) {
        return pipeline::RecordDerivativeRound(w, upstream, *classified, now, targets);
      },
      [this, alive = alive_, upstream, classified, finish](Status status) {
        if (!*alive) return;
        service::Metrics& metrics = *deps_.metrics;
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
            .Set(static_cast<double>(classified->lagging));
        const std::string evictions = pipeline::EvictionsText(classified->evicted);
        deps_.log->info("derivatives of {}: {}{}", upstream, classified->summary,
                        evictions.empty() ? "" : "; evicted " + evictions);
        if (deps_.published) deps_.published();
        finish();
      });
}

}  // namespace hubwatch::schedule
