#pragma once

// PollLoop: the service's heartbeat. One timer wakes at the scheduler's next due time (at most a
// minute away); each wake starts the polls the scheduler hands out, and each poll's end records
// its outcome (metrics, one log line), has the scheduler decide the repo's next poll (its slot, a
// pending hint or a settling burst's wake) and hands that time to Hooks::scheduled for the
// store, follows the Hub's RateLimit headers, and re-arms the timer.
//
// With change hints on (the scheduler's reconcile interval set), a hint (Hint) polls a repo at
// once, and the schedule's own polls are reconciles: one that finds a new revision no hint
// announced is a miss, logged and counted, and the repo is polled every interval (not every
// reconcile interval) until a listing shows it again: the listing may not show it at all
// (private, gated, or lagging). Metrics: hubwatch_hint_polls_total{source},
// hubwatch_hints_used_total{source} (hinted polls that found a revision),
// hubwatch_hint_misses_total.
//
// Hub webhooks the scheduler merged, deferred or dropped (its webhook share and gap) are logged
// in one line at most once a minute ("hub webhooks: ...", webhook_digest.h);
// the API counts them per request (hubwatch_hub_webhooks_total{outcome}).
//
// Time and the timer are `clock`'s (production: the Asio clock on the io_context; tests: a
// manual one). Its timer never fires after Stop() or destruction.
//
// Thread safety: network thread only (the io_context's, where `clock`'s timers run); destroy it
// there or after the loop has stopped. Ownership: borrows everything it is given; REQUIRES: the
// io_context, clock, logger and metrics outlive it, and the client and poller given to Start
// outlive every poll it starts.

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "daemon/schedule/poll_metrics.h"
#include "daemon/schedule/scheduler.h"
#include "daemon/schedule/webhook_digest.h"
#include "daemon/service/loop_health.h"
#include "estimator/base/clock.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/poller.h"

namespace spdlog {
class logger;
}

namespace hubwatch::schedule {

class PollLoop final : public service::LoopHealth {
 public:
  struct Hooks {
    std::function<void()> published;  // a poll published advisories
    std::function<void()> drained;    // after Stop(): the last poll in flight ended
    // The scheduler decided when `repo` is polled next (a poll ended, or hints went off): the
    // service records it in the store, which a restart reads.
    std::function<void(const std::string& repo, int64_t at)> scheduled;
  };
  PollLoop(boost::asio::io_context& io, TimerClock& clock, std::shared_ptr<spdlog::logger> log,
           PollMetrics& metrics, Hooks hooks);
  ~PollLoop() override;
  PollLoop(const PollLoop&) = delete;
  PollLoop& operator=(const PollLoop&) = delete;

  // Starts ticking. REQUIRES: called once.
  void Start(hub::HubClient& hub, pipeline::Poller& poller);
  // Looks at the schedule now (a repo was added, the options changed).
  void Rearm();
  // New scheduler options. Turning hints off brings every repo slotted further than an interval
  // away (a reconcile slot) back to its interval slot.
  void SetOptions(SchedulerOptions options);
  // A hint says `repo` moved: poll it now (deduplicated with a poll already due or running; a
  // webhook's held to the scheduler's webhook share and gap). A listing hint also means the
  // listing shows the repo.
  Scheduler::HintOutcome Hint(const std::string& repo, store::PollTrigger trigger);
  // Starts nothing more; polls in flight end (or are abandoned by the client's shutdown) and
  // `drained` runs once none is left (at once when none is).
  void Stop();

  Scheduler& scheduler() { return scheduler_; }
  const Scheduler& scheduler() const { return scheduler_; }
  // LoopHealth: whether the timer ran lately, the status line, the polls in flight.
  bool alive() const override;
  std::string StatusLine() const override;
  size_t polls_in_flight() const override { return running_; }

 private:
  void Tick();
  // Drops the tick timer, if one is set.
  void CancelTick();
  void StartPoll(const std::string& repo);
  bool hints_on() const { return scheduler_.options().reconcile_interval_s > 0; }
  // Counts a miss or a hint used; says how the poll was started for the log line.
  void RecordFinding(const std::string& repo, const pipeline::PollReport& report);
  void Finished(const std::string& repo, const pipeline::PollReport& report, double seconds);
  void Scheduled(const std::string& repo, int64_t at);
  void ObserveHubBudget();
  void MaybeDrained();
  // The webhook line, when there is something to say and the last one is a minute old.
  void MaybeLogWebhooks(int64_t now);

  boost::asio::io_context& io_;
  TimerClock& clock_;
  std::shared_ptr<spdlog::logger> log_;
  PollMetrics& metrics_;
  Hooks hooks_;
  std::optional<TimerId> tick_;  // the timer set by the last Tick, until it fires
  Scheduler scheduler_{SchedulerOptions{}};
  hub::HubClient* hub_ = nullptr;
  pipeline::Poller* poller_ = nullptr;
  SteadyTime last_tick_;
  int64_t last_cycle_ = 0;  // Unix seconds of the last poll's end; 0: none yet
  int64_t errors_ = 0;
  // Repos the listing did not show when they moved: polled every interval.
  std::set<std::string> unlisted_;
  // Repos whose next poll is a settle wake, not a reconcile.
  std::set<std::string> settle_wakes_;
  bool stopping_ = false;
  // Polls started and not yet Finished, those of repos untracked meanwhile included (the
  // scheduler forgets a repo at once): what the status says and a stop waits for.
  size_t running_ = 0;
  WebhookDigest webhooks_;  // webhook hints not polled at once, told once a minute
};

}  // namespace hubwatch::schedule
