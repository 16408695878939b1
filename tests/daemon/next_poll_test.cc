// When a repo is polled next: the wait after each kind of poll end (next_poll.h), and the
// scheduler's decision from it (the slot, a pending hint, a burst's settle time).

#include "daemon/schedule/next_poll.h"

#include <gtest/gtest.h>

#include "daemon/schedule/scheduler.h"

namespace hubwatch::schedule {
namespace {

PollEnd Failed(store::RepoState state, int64_t errors, bool never_seen = false) {
  PollEnd end;
  end.ok = false;
  end.state = state;
  end.consecutive_errors = errors;
  end.never_seen = never_seen;
  return end;
}

TEST(NextPoll, AGoodPollWaitsTheInterval) { EXPECT_EQ(WaitAfter(PollEnd{}, 900), 900); }

TEST(NextPoll, ErrorsBackOffDoublingUpToADay) {
  std::vector<int64_t> waits;
  for (int64_t errors = 1; errors <= 9; ++errors) {
    waits.push_back(WaitAfter(Failed(store::RepoState::kErroring, errors), 900));
  }
  EXPECT_EQ(waits,
            (std::vector<int64_t>{900, 1800, 3600, 7200, 14400, 28800, 57600, 57600, 57600}));
  // 3600 << 6 is more than a day.
  EXPECT_EQ(WaitAfter(Failed(store::RepoState::kErroring, 7), 3600), 24 * 3600);
  // A failure before the repo's record was read counts no error: the interval.
  EXPECT_EQ(WaitAfter(Failed(store::RepoState::kErroring, 0), 900), 900);
}

TEST(NextPoll, AnUnavailableRepoPollsFourTimesSlowerUnlessNeverSeen) {
  for (store::RepoState state :
       {store::RepoState::kDeleted, store::RepoState::kGated, store::RepoState::kDisabled}) {
    EXPECT_EQ(WaitAfter(Failed(state, 0), 900), 3600) << store::RepoStateName(state);
  }
  EXPECT_EQ(WaitAfter(Failed(store::RepoState::kDeleted, 0, /*never_seen=*/true), 900), 900);
}

TEST(NextPoll, APollAShutdownAbandonedWaitsTheInterval) {
  PollEnd abandoned;
  abandoned.ok = false;  // state kOk: nothing was recorded
  EXPECT_EQ(WaitAfter(abandoned, 900), 900);
}

TEST(NextPoll, TheSchedulerDecidesTheSlotAfterTheWaitAndReturnsIt) {
  Scheduler s({.interval_s = 900, .max_concurrent = 4, .quota = 1000, .window_s = 300});
  const int64_t now = 1'000'000;
  s.Track("a/one", 0);
  ASSERT_EQ(s.TakeDue(now).size(), 1u);
  const Scheduler::NextPoll next =
      s.Finished("a/one", Failed(store::RepoState::kErroring, 3), 1, now);
  EXPECT_FALSE(next.settle_wake);
  EXPECT_EQ(next.at, s.Align("a/one", now + 3600));  // the backoff, then the repo's slot
  EXPECT_EQ(s.next_poll_at("a/one"), next.at);        // what is returned is what is scheduled
}

TEST(NextPoll, AHeldBurstBringsTheNextPollForwardToItsSettleTime) {
  Scheduler s({.interval_s = 900, .max_concurrent = 4, .quota = 1000, .window_s = 300});
  const int64_t now = 1'000'000;
  s.Track("a/one", 0);
  ASSERT_EQ(s.TakeDue(now).size(), 1u);
  PollEnd held;
  held.settles_at = now + 60;
  const Scheduler::NextPoll next = s.Finished("a/one", held, 1, now);
  EXPECT_TRUE(next.settle_wake);
  EXPECT_EQ(next.at, now + 60);
  EXPECT_EQ(s.next_poll_at("a/one"), now + 60);
  // A settle time past the slot changes nothing.
  ASSERT_EQ(s.TakeDue(now + 60).size(), 1u);
  held.settles_at = now + 60 + 5000;
  const Scheduler::NextPoll later = s.Finished("a/one", held, 1, now + 60);
  EXPECT_FALSE(later.settle_wake);
  EXPECT_EQ(later.at, s.Align("a/one", now + 60 + 900));
}

}  // namespace
}  // namespace hubwatch::schedule
