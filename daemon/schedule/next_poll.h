#pragma once

// When a repo is polled next: the rule the scheduler applies when a poll ends (Scheduler::
// Finished), the one place it is written. The pipeline reports what happened (PollEnd: the
// repo's state, its errors in a row, whether it was ever seen, when a held burst settles); the
// scheduler turns it into a time - this wait, then the repo's slot, a pending hint, or the
// settle time - and the poll loop records that time in the store (RepoStore::SetNextPoll), so
// the stored time and the one in memory are the same, and a restart resumes the schedule where
// it was. A hint's poll is not stored: a restart forgets it, and the listing (read on from its
// watermark) or the reconcile finds the change. Rate limits the Hub announces (Retry-After,
// RateLimit) are followed by the client and the request budget, not by moving one repo.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>

#include "tracker/pipeline/poller.h"
#include "tracker/store/records.h"

namespace hubwatch::schedule {

// What the scheduler needs to know of how a poll ended.
struct PollEnd {
  bool ok = true;
  store::RepoState state = store::RepoState::kOk;  // after the poll
  int64_t consecutive_errors = 0;                  // failed polls in a row, this one included
  bool never_seen = false;  // a 404 before the repo's first revision (announced, not published)
  std::optional<int64_t> settles_at{};  // when the advisories still held settle

  static PollEnd Of(const pipeline::PollReport& report);
};

// How long after a poll that ended as `end` the repo is due at the earliest: the interval after
// a good poll (or one a shutdown abandoned); after errors in a row a backoff that doubles from
// the interval up to a day; four times the interval for a repo that is deleted, gated or
// disabled, unless it was never seen (one announced before it is published polls as usual).
int64_t WaitAfter(const PollEnd& end, int64_t interval_s);

}  // namespace hubwatch::schedule
