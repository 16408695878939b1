#include "daemon/schedule/poll_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <utility>

#include "daemon/service/metrics.h"
#include "estimator/base/heap.h"

namespace hubwatch::schedule {
namespace {

// A poll that failed, and when the repo is polled next (`next_in` seconds; nullopt: it was
// untracked while it was polled, and is not polled again).
void LogFailedPoll(spdlog::logger& log, const std::string& repo, const pipeline::PollReport& r,
                   std::optional<int64_t> next_in) {
  const std::string_view state = r.never_seen ? "not found" : store::RepoStateName(r.state);
  if (next_in) {
    log.warn("{}: {} ({}), next poll in {} s", repo, r.error, state, *next_in);
  } else {
    log.warn("{}: {} ({}); no longer tracked, not polled again", repo, r.error, state);
  }
}

// The longest the timer sleeps: the watchdog's measure of a live loop.
constexpr int64_t kMaxSleepS = 60;

}  // namespace

PollLoop::PollLoop(boost::asio::io_context& io, TimerClock& clock,
                   std::shared_ptr<spdlog::logger> log, PollMetrics& metrics, Hooks hooks)
    : io_(io),
      clock_(clock),
      log_(std::move(log)),
      metrics_(metrics),
      hooks_(std::move(hooks)),
      last_tick_(clock.Now()) {}

PollLoop::~PollLoop() { CancelTick(); }

void PollLoop::CancelTick() {
  if (tick_) clock_.Cancel(*std::exchange(tick_, std::nullopt));
}

void PollLoop::Start(hub::HubClient& hub, pipeline::Poller& poller) {
  hub_ = &hub;
  poller_ = &poller;
  Tick();
}

void PollLoop::Rearm() {
  if (!poller_) return;  // not started: Start() looks at the schedule
  CancelTick();
  Tick();
}

void PollLoop::SetOptions(SchedulerOptions options) {
  const bool hints_off = options.reconcile_interval_s == 0 && hints_on();
  scheduler_.SetOptions(options);
  if (!hints_off) return;
  unlisted_.clear();
  const int64_t now = clock_.UnixSeconds();
  std::vector<std::string> far;
  scheduler_.ForEach([&](std::string_view repo, int64_t at) {
    if (at > now + options.interval_s && !scheduler_.polling(repo)) far.emplace_back(repo);
  });
  for (const std::string& repo : far) {
    scheduler_.Track(repo, scheduler_.Align(repo, now));
    Scheduled(repo, *scheduler_.next_poll_at(repo));
  }
}

void PollLoop::Scheduled(const std::string& repo, int64_t at) {
  if (hooks_.scheduled) hooks_.scheduled(repo, at);
}

void PollLoop::Stop() {
  stopping_ = true;
  CancelTick();
  MaybeDrained();
}

bool PollLoop::alive() const {
  return clock_.Now() - last_tick_ < std::chrono::seconds(2 * kMaxSleepS);
}

std::string PollLoop::StatusLine() const {
  const std::string last = last_cycle_
                               ? std::to_string(clock_.UnixSeconds() - last_cycle_) + "s ago"
                               : std::string("none yet");
  return "watching " + std::to_string(scheduler_.size()) + " repos; " +
         std::to_string(running_) + " polling; last poll " + last + "; " +
         std::to_string(errors_) + " errors";
}

void PollLoop::Tick() {
  if (stopping_) return;
  last_tick_ = clock_.Now();
  const int64_t now = clock_.UnixSeconds();
  MaybeLogWebhooks(now);  // the end of a flood is told within a tick
  for (const std::string& repo : scheduler_.TakeDue(now)) StartPoll(repo);
  const int64_t wake =
      std::min(scheduler_.NextWake(now).value_or(now + kMaxSleepS), now + kMaxSleepS);
  CancelTick();
  tick_ =
      clock_.RunAt(clock_.Now() + std::chrono::seconds(std::max<int64_t>(1, wake - now)), [this] {
        tick_.reset();
        Tick();
      });
}

Scheduler::HintOutcome PollLoop::Hint(const std::string& repo, store::PollTrigger trigger) {
  using Outcome = Scheduler::HintOutcome;
  const int64_t now = clock_.UnixSeconds();
  const Outcome outcome = scheduler_.Hint(repo, trigger, now);
  if (outcome == Outcome::kUntracked) return outcome;
  if (trigger == store::PollTrigger::kListing) unlisted_.erase(repo);
  if (trigger == store::PollTrigger::kWebhook && outcome != Outcome::kQueued) {
    webhooks_.Count(outcome);
    MaybeLogWebhooks(now);
  }
  if (outcome == Outcome::kQueued || outcome == Outcome::kDeferred) {
    metrics_.metrics()
        .counter("hubwatch_hint_polls_total", "polls queued by a change hint",
                 {{"source", std::string(store::PollTriggerName(trigger))}})
        .Add();
    if (!stopping_) boost::asio::post(io_, [this] { Rearm(); });
  }
  return outcome;
}

void PollLoop::StartPoll(const std::string& repo) {
  const SteadyTime started = clock_.Now();
  store::PollTrigger trigger =
      hints_on() ? store::PollTrigger::kReconcile : store::PollTrigger::kPoll;
  if (settle_wakes_.erase(repo)) trigger = store::PollTrigger::kPoll;
  if (std::optional<store::PollTrigger> hinted = scheduler_.TakeTrigger(repo)) trigger = *hinted;
  ++running_;
  poller_->Poll(repo, trigger, [this, repo, started](pipeline::PollReport r) {
    Finished(repo, r, std::chrono::duration<double>(clock_.Now() - started).count());
  });
}

void PollLoop::Finished(const std::string& repo, const pipeline::PollReport& r, double seconds) {
  --running_;
  metrics_.RecordPoll(r, seconds);
  metrics_.SyncHub(hub_->accounting());
  ObserveHubBudget();
  const int64_t now = clock_.UnixSeconds();
  const bool failed = !r.ok && !r.abandoned;
  if (!failed && r.head_moved) {
    // An ingest parses every new revision's files and headers and estimates it: the heap it
    // grew to is given back rather than kept at that peak.
    ReleaseFreedMemory();
    log_->info("{}: {} new revision(s), {} change(s), {} advisory(ies){}, found by {}", repo,
               r.revisions, r.changes, r.advisories,
               r.history_rewritten ? ", history rewritten" : "", store::PollTriggerName(r.trigger));
    RecordFinding(repo, r);
  } else if (!failed) {
    log_->debug("{}: unchanged ({} request)", repo, r.stats.requests);
  }
  last_cycle_ = now;
  // With hints, a repo in good health that the listing shows is next polled at its reconcile
  // slot at least an interval away; one the listing did not show, at its next interval slot.
  const bool reconcile = hints_on() && r.ok && !unlisted_.count(repo);
  // Untracked while it was polled (DELETE, a reload, a follow rule): no next poll to record.
  const bool tracked = scheduler_.tracked(repo);
  const Scheduler::NextPoll next =
      scheduler_.Finished(repo, PollEnd::Of(r), r.stats.requests, now,
                          reconcile ? Scheduler::Slots::kReconcile : Scheduler::Slots::kInterval);
  if (next.settle_wake) settle_wakes_.insert(repo);
  if (tracked) Scheduled(repo, next.at);
  if (failed) {
    ++errors_;
    LogFailedPoll(*log_, repo, r, tracked ? std::optional<int64_t>(next.at - now) : std::nullopt);
  }
  if (r.published > 0 && hooks_.published) hooks_.published();
  if (stopping_) {
    MaybeDrained();
  } else {
    boost::asio::post(io_, [this] { Rearm(); });
  }
}

void PollLoop::RecordFinding(const std::string& repo, const pipeline::PollReport& r) {
  if (!metrics_.RecordFinding(r)) return;
  unlisted_.insert(repo);
  log_->warn(
      "{}: hint miss: the reconcile poll found {} revision(s) no listing or webhook "
      "announced; polling it every {} s until a listing shows it",
      repo, r.revisions, scheduler_.options().interval_s);
}

// The scheduler follows the Hub's RateLimit headers for the api bucket.
void PollLoop::ObserveHubBudget() {
  const hub::BucketStatus api = hub_->bucket_status("api");
  std::optional<int64_t> paused_until;
  if (api.paused_until) {
    const auto left = *api.paused_until - clock_.Now();
    paused_until = clock_.UnixSeconds() + std::chrono::ceil<std::chrono::seconds>(left).count();
  }
  scheduler_.requests().ObserveHub(paused_until, api.quota, api.window_seconds);
}

void PollLoop::MaybeLogWebhooks(int64_t now) {
  if (std::optional<WebhookDigest::Line> line = webhooks_.Take(now, scheduler_)) {
    log_->log(line->warn ? spdlog::level::warn : spdlog::level::info, "{}", line->text);
  }
}

void PollLoop::MaybeDrained() {
  if (running_ > 0 || !hooks_.drained) return;
  auto drained = std::move(hooks_.drained);
  hooks_.drained = nullptr;
  drained();
}

}  // namespace hubwatch::schedule
