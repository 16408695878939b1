#pragma once

// LoopControl: the API's hold on the running service (api::ServiceControl), over the poll loop.
// A repo the API added is scheduled at once, one it removed is dropped, a Hub webhook's hint goes
// to the loop, follow rules the API changed go to whoever runs them (SetFollowHooks); /readyz reads whether the start is done and no stop has begun. It keeps the
// hubwatch_repos gauge, which the start and reloads refresh too (UpdateRepoGauge).
//
// Thread safety: the network thread only, like the loop. REQUIRES: the loop and the metrics
// outlive it.

#include <functional>
#include <string>
#include <utility>
#include <vector>

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
  void FollowRulesChanged(const std::vector<std::string>& untracked) override {
    if (!stopping_ && follow_changed_) follow_changed_(untracked);
  }
  api::FollowRuntime follow_runtime(const std::string& rule) const override {
    return follow_runtime_ ? follow_runtime_(rule) : api::FollowRuntime{};
  }
  store::FollowTargets follow_targets() const override { return follow_targets_; }
  // Who runs the follow rules (the ConfigApplier, made after this), and who subscribes to their
  // events.
  void SetFollowHooks(std::function<void(const std::vector<std::string>&)> changed,
                      std::function<api::FollowRuntime(const std::string&)> runtime,
                      store::FollowTargets targets) {
    follow_changed_ = std::move(changed);
    follow_runtime_ = std::move(runtime);
    follow_targets_ = std::move(targets);
  }
  bool ready() const override { return ready_ && !stopping_; }
  std::string status_line() const override { return loop_.StatusLine(); }

 private:
  schedule::PollLoop& loop_;
  service::Metrics& metrics_;
  bool ready_ = false;
  bool stopping_ = false;
  std::function<void(const std::vector<std::string>&)> follow_changed_;
  std::function<api::FollowRuntime(const std::string&)> follow_runtime_;
  store::FollowTargets follow_targets_;
};

}  // namespace hubwatch::app
