#pragma once

// Scheduler: when each tracked repo is polled. Pure bookkeeping over injected time, so every
// timing rule is testable without sleeping.
//
//   - each repo has a next poll time; a repo never polled is due at once
//   - repos are spread over the interval by a deterministic phase (a hash of the repo id), so
//     they do not all fire together: a repo's slots are phase + k * interval
//   - at most max_concurrent polls run at once
//   - the requests polls make count against the request budget (request_budget.h: a fixed
//     window's quota, the Hub's own limits, the webhooks' share); when it is spent nothing starts
//     until the next window
//   - when a poll ends, the repo's next poll is decided here (next_poll.h: the wait after that
//     outcome, then the repo's slot, a pending hint or a burst's settle time), once
//   - with change hints on (reconcile_interval_s > 0) a repo in good health is polled once per
//     reconcile interval, at a phase of its own in that window (batched by the minute); a hint (the
//     Hub's listing or a webhook says it moved) makes it due at once, or again as soon as a poll in
//     flight ends. Hints are deduplicated: a repo due already is not queued twice
//   - a Hub webhook is a hint anyone holding its secret can send, so the polls webhooks start
//     get a share of the budget of their own (webhook_percent of budget() per window; a hint
//     beyond it is dropped: the listing and the reconcile still find the change), and each repo
//     is polled for webhooks at most once per webhook_gap_s: a webhook while one is queued is
//     merged into it, and one within webhook_gap_s of the start of the repo's last
//     webhook-started poll (in flight or done) is deferred to the end of that gap, where one
//     poll serves every webhook that came meanwhile. The rest of the budget stays the schedule's
//   - requests made outside polls (listing reads) count against the window too (Spend)
//   - it follows what the Hub's RateLimit headers say (ObserveHub): while the Hub has paused the
//     bucket nothing starts, and a Hub quota below the configured one lowers the budget
// Memory: a tracked repo costs about 80 bytes (poll_queue.h), so 100,000 repos fit in 8 MB.
// Not thread-safe: the service uses it from the network thread.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/schedule/next_poll.h"
#include "daemon/schedule/poll_queue.h"
#include "daemon/schedule/request_budget.h"
#include "tracker/store/records.h"

namespace hubwatch::schedule {

struct SchedulerOptions {
  int64_t interval_s = 900;
  int64_t reconcile_interval_s = 0;  // 0: change hints off
  int max_concurrent = 4;
  int64_t quota = 400;  // requests per window
  int64_t window_s = 300;
  int64_t webhook_percent = 25;  // of budget(), per window, for the polls webhooks start
  int64_t webhook_gap_s = 60;    // a repo is polled for webhooks at most once per this
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options)
      : options_(options), budget_(BudgetOptions(options)) {}
  void SetOptions(SchedulerOptions options) {
    options_ = options;
    budget_.SetOptions(BudgetOptions(options));
  }
  const SchedulerOptions& options() const { return options_; }

  // next_poll_at: Unix seconds; 0 means never polled (due now).
  void Track(const std::string& repo, int64_t next_poll_at);
  void Untrack(const std::string& repo);
  bool tracked(const std::string& repo) const { return queue_.Find(repo).has_value(); }
  size_t size() const { return queue_.size(); }
  size_t in_flight() const { return queue_.in_flight(); }
  bool polling(std::string_view repo) const;
  // Calls f(id, next poll time) for every tracked repo, in no particular order. The id's view
  // is valid during the call; f must not change the scheduler.
  template <class F>
  void ForEach(F&& f) const {
    queue_.ForEach(std::forward<F>(f));
  }

  // Repos to start now, the longest-due first, within the concurrency cap and the budget. They
  // count as in flight until Finished().
  std::vector<std::string> TakeDue(int64_t now);

  // How a repo's next slot is chosen after a poll: phase + k * interval_s, or, for a repo the
  // hints cover, phase + k * reconcile_interval_s.
  enum class Slots { kInterval, kReconcile };

  // With hints on, reconcile slots (and stored next poll times, when tracked at start) are rounded
  // up to a multiple of a batch quantum (the interval, at most 60 s): the polls due in the same
  // minute share one wake, one connection check and one store commit instead of one each. `t`
  // unchanged with hints off or for 0 (due now).
  int64_t Batched(int64_t t) const;

  // When a repo is polled next, as decided when its poll ended.
  struct NextPoll {
    int64_t at = 0;            // Unix seconds
    bool settle_wake = false;  // at the settle time of a held burst, before the repo's slot
  };
  // A poll ended as `end`: `requests` count against the current window, and the repo's next
  // poll is decided: at once (or at the end of a webhook's gap) when a hint came while it was in
  // flight; else the first of its `slots` at least WaitAfter(end) away; brought forward to the
  // settle time of a burst still held. The caller records the returned time in the store.
  NextPoll Finished(const std::string& repo, const PollEnd& end, int64_t requests, int64_t now,
                    Slots slots = Slots::kInterval);

  // kQueued: a poll is due now (or when the one in flight ends); kAlreadyQueued: merged into a
  // poll already queued or due; kDeferred: a webhook's poll, queued for the end of the repo's
  // webhook gap; kDropped: a webhook's, not queued (the webhook share of the window is spent).
  enum class HintOutcome { kQueued, kAlreadyQueued, kDeferred, kDropped, kUntracked };
  // A hint says `repo` moved: it is due now (or again when its poll in flight ends), and the
  // poll that serves it is started by `trigger`. A webhook's hint is held to the webhook rules
  // above; a listing's hint is not, and brings a deferred webhook poll forward to now.
  HintOutcome Hint(const std::string& repo, store::PollTrigger trigger, int64_t now);
  // The trigger of the hint a poll about to start serves (and forgets it); nullopt: the
  // schedule's own.
  std::optional<store::PollTrigger> TakeTrigger(const std::string& repo);
  // Requests made outside polls, counted against the current window.
  void Spend(int64_t requests, int64_t now) { budget_.Spend(requests, now); }

  // The next time something may start: a due time, or the window's end when the budget is
  // spent; nullopt when nothing is tracked.
  std::optional<int64_t> NextWake(int64_t now) const;

  // The request budget the polls spend (and, through Spend, everything else): the Hub's limits
  // are observed there (RequestBudget::ObserveHub).
  RequestBudget& requests() { return budget_; }
  const RequestBudget& requests() const { return budget_; }
  std::optional<int64_t> next_poll_at(const std::string& repo) const;

  // The repo's offset into each interval, in [0, interval_s).
  static int64_t Phase(const std::string& repo, int64_t interval_s);
  // The first slot phase + k * interval at or after t.
  int64_t Align(const std::string& repo, int64_t t, Slots slots = Slots::kInterval) const;

 private:
  static RequestBudget::Options BudgetOptions(const SchedulerOptions& o) {
    return {.quota = o.quota, .window_s = o.window_s, .webhook_percent = o.webhook_percent};
  }
  SchedulerOptions options_;
  // Every tracked repo, its next poll time and whether it is polled now; the waiting ones by
  // time: TakeDue and NextWake read its front, O(log n) a poll however many repos are tracked.
  PollQueue queue_;
  // Hints waiting for a poll to start (a repo in flight is due again when its poll ends, or at
  // not_before when that is later: a deferred webhook).
  struct PendingHint {
    store::PollTrigger trigger;
    int64_t not_before;
  };
  std::map<std::string, PendingHint> hinted_;
  // When the last poll a webhook started for each repo began, while within webhook_gap_s
  // (older ones are pruned); and the webhook-started polls in flight.
  std::map<std::string, int64_t> webhook_started_;
  std::set<std::string> webhook_in_flight_;
  RequestBudget budget_;
};

}  // namespace hubwatch::schedule
