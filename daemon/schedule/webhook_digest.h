#pragma once

// WebhookDigest: the Hub webhooks the scheduler did not poll at once - merged into a poll already
// queued, deferred to the end of the repo's webhook gap, or dropped (the webhooks' share of the
// budget spent) - told in one log line at most once a minute, with the counts since the last
// line. A flood of webhooks costs one line a minute, not one per webhook.
//
// Not thread-safe: the poll loop's thread.

#include <cstdint>
#include <optional>
#include <string>

#include "daemon/schedule/scheduler.h"

namespace hubwatch::schedule {

class WebhookDigest {
 public:
  // Counts a webhook's hint; kQueued and kUntracked are not counted.
  void Count(Scheduler::HintOutcome outcome);

  struct Line {
    bool warn = false;  // some were dropped
    std::string text;
  };
  // The line to write at `now`, and the counts start again; nullopt when there is nothing to
  // say or the last line is under a minute old. `scheduler` says the budget and the gap.
  std::optional<Line> Take(int64_t now, const Scheduler& scheduler);

 private:
  int64_t merged_ = 0, deferred_ = 0, dropped_ = 0;
  std::optional<int64_t> told_at_;
};

}  // namespace hubwatch::schedule
