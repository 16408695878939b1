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
// Memory: a tracked repo costs about 80 bytes (its id interned once in RepoIds, its next poll
// time, a slot in a binary heap), so 100,000 repos fit in 8 MB (issue 33).
// Not thread-safe: the service uses it from the network thread.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/schedule/next_poll.h"
#include "daemon/schedule/repo_ids.h"
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
  bool tracked(const std::string& repo) const { return ids_.Find(repo).has_value(); }
  size_t size() const { return ids_.size(); }
  size_t in_flight() const { return in_flight_; }
  bool polling(const std::string& repo) const;
  // Calls f(id, next poll time) for every tracked repo, in no particular order. The id's view
  // is valid during the call; f must not change the scheduler.
  template <class F>
  void ForEach(F&& f) const {
    for (RepoIds::Index i = 0; i < ids_.end(); ++i) {
      if (ids_.live(i)) f(ids_.Name(i), entries_[i].at);
    }
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
  // A tracked repo: its next poll time, and whether a poll of it is running.
  struct Entry {
    int64_t at = 0;
    bool in_flight = false;
  };
  // (next poll time, repo) in the waiting heap; valid while the repo is tracked, not in flight
  // and still due at `at` (a moved or started repo leaves a stale slot, dropped when it surfaces).
  struct Slot {
    int64_t at;
    RepoIds::Index repo;
  };
  // The heap's order: the earliest time on top, ties by id.
  bool Later(const Slot& a, const Slot& b) const {
    return a.at != b.at ? a.at > b.at : ids_.Name(a.repo) > ids_.Name(b.repo);
  }
  bool Valid(const Slot& s) const {
    return ids_.live(s.repo) && !entries_[s.repo].in_flight && entries_[s.repo].at == s.at;
  }
  // Moves a waiting repo's next poll time.
  void Reschedule(RepoIds::Index repo, int64_t at);
  // Queues a waiting repo at `at`; rebuilds the heap when stale slots outnumber the live ones.
  void Push(RepoIds::Index repo, int64_t at);
  // The earliest valid slot (stale ones above it dropped), or nullptr when none waits.
  const Slot* Front() const;
  void PopFront() const;

  SchedulerOptions options_;
  RepoIds ids_;
  std::vector<Entry> entries_;  // by RepoIds index
  size_t in_flight_ = 0;
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
  // Every tracked repo not in flight, by next poll time (a binary heap, Later on top last):
  // TakeDue and NextWake read its front, so a poll costs O(log n) however many repos are
  // tracked. Mutable: a const read drops the stale slots it finds on top.
  mutable std::vector<Slot> waiting_;
  RequestBudget budget_;
};

}  // namespace hubwatch::schedule
