#pragma once

// DerivativeWatch: when the derivatives of the tracked repos that ask for it ("derivatives" in
// their repos[] entry) are checked, and what is told of each check. Per repo, one round every
// interval; the round itself is the pipeline's: what the store knows before it and the
// classification after it (pipeline/derivative_round.h), the Hub's part (listing, ranking,
// follow-ups, reads at a new head: pipeline/derivative_check.h). This class prepares a round,
// starts it, hands what it found to the classification, records the outcome through the store
// thread in one transaction (which publishes a derivative's own advisory when it lags and updates
// it when it catches up, and evicts what the round dropped), logs it, counts it, and schedules
// the next.
//
// Low priority: a round starts only when no poll is due or running, one round at a time, its
// reads `concurrency` at a time, its requests spent from the scheduler's budget. A listing
// that fails is logged and retried at the next interval; a derivative that cannot be read keeps
// its statuses and says why.
//
// Metrics: hubwatch_derivative_rounds_total{outcome}, hubwatch_derivative_reads_total{outcome},
// hubwatch_derivative_requests_total, hubwatch_derivatives_lagging{repo}.
//
// Rounds are timed by the TimerClock in Deps; its timer never fires after Stop() or destruction.
//
// Thread safety: network thread only (where the clock's timers run); destroy it there or after
// the loop has stopped. Ownership: borrows what Deps holds, which must outlive it; Stop() before
// they go.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/service/store_access.h"
#include "estimator/base/clock.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/derivative_round.h"

namespace spdlog {
class logger;
}

namespace hubwatch::service {
class Metrics;
}

namespace hubwatch::schedule {

class DerivativeWatch {
 public:
  struct Options {
    int64_t interval_s = 3600;
    int concurrency = 2;
    // Stored derivatives the listing did not show that one round reads by their own request
    // (one request each); the others keep their statuses until a later round.
    size_t follow_budget = 50;
  };
  struct Deps {
    TimerClock* clock = nullptr;  // time, and the timer between looks at the schedule
    std::shared_ptr<spdlog::logger> log;
    service::Metrics* metrics = nullptr;
    hub::HubClient* hub = nullptr;
    service::StoreAccess* store = nullptr;
    std::function<bool()> polls_idle;             // no poll due or running
    std::function<void(int64_t requests)> spend;  // the scheduler's budget
    std::function<void()> published;              // a round stored lags (advisories may be new)
  };

  DerivativeWatch(Deps deps, Options options);
  ~DerivativeWatch();

  // The repos to follow (those with derivatives.enabled); a repo already followed keeps its
  // next round's time, a new one is due at once.
  void SetRepos(const std::vector<config::RepoConfig>& repos);
  void SetOptions(Options options) { options_ = options; }
  // Where a derivative's new advisory is delivered (subscriptions matching the derivative).
  void SetTargets(store::DerivativeTargets targets) { targets_ = std::move(targets); }
  void Start();
  // Starts no further round; a round in flight ends without storing.
  void Stop();
  bool running() const { return running_; }

 private:
  // Looks at the schedule again in `seconds` (0: as soon as the loop is free), replacing a timer
  // set before.
  void Arm(int64_t seconds);
  void CancelTimer();
  void Tick();
  void StartRound(const config::RepoConfig& repo);
  // Classifies what the round found, records it, and schedules the repo's next round.
  void EndRound(const pipeline::PreparedDerivativeRound& prepared, pipeline::DerivativeRound round);

  Deps deps_;
  Options options_;
  std::optional<TimerId> timer_;  // set by Arm, until it fires
  store::DerivativeTargets targets_;
  std::map<std::string, config::RepoConfig> repos_;
  std::map<std::string, int64_t> next_round_at_;
  bool running_ = false;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hubwatch::schedule
