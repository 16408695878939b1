#pragma once

// LoopControl: the API's hold on the running service (api::ServiceControl), over the poll loop.
// A repo the API added is scheduled at once, one it removed is dropped, a Hub webhook's hint goes
// to the loop; /readyz reads whether the start is done and no stop has begun. It keeps the
// hubwatch_repos gauge, which the start and reloads refresh too (UpdateRepoGauge).
//
// Thread safety: the network thread only, like the loop. REQUIRES: the loop and the metrics
// outlive it.

#include <string>

#include "daemon/api/service_control.h"
#include "daemon/schedule/poll_loop.h"
#include "daemon/service/metrics.h"

namespace hubwatch::app {

class LoopControl final : public api::ServiceControl {
 public:
  LoopControl(schedule::PollLoop& loop, service::Metrics& metrics)
      : loop_(loop), metrics_(metrics) {}

  // The start is done: the listener bound, the configuration applied, the loop running.
  void SetReady() { ready_ = true; }
  // A stop has begun: nothing more is scheduled from the API.
  void SetStopping() { stopping_ = true; }
  bool stopping() const { return stopping_; }
  bool started() const { return ready_; }
  void UpdateRepoGauge() {
    metrics_.gauge("hubwatch_repos", "tracked repositories")
        .Set(static_cast<double>(loop_.scheduler().size()));
  }

  // api::ServiceControl
  void RepoAdded(const std::string& id) override {
    if (stopping_) return;
    loop_.scheduler().Track(id, 0);  // the store says added_at: due now
    UpdateRepoGauge();
    loop_.Rearm();
  }
  void RepoRemoved(const std::string& id) override {
    loop_.scheduler().Untrack(id);
    UpdateRepoGauge();
  }
  schedule::Scheduler::HintOutcome Hint(const std::string& id,
                                        store::PollTrigger trigger) override {
    if (stopping_) return schedule::Scheduler::HintOutcome::kUntracked;
    return loop_.Hint(id, trigger);
  }
  bool ready() const override { return ready_ && !stopping_; }
  std::string status_line() const override { return loop_.StatusLine(); }

 private:
  schedule::PollLoop& loop_;
  service::Metrics& metrics_;
  bool ready_ = false;
  bool stopping_ = false;
};

}  // namespace hubwatch::app
