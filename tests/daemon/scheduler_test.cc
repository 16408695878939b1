#include "daemon/schedule/scheduler.h"

#include <gtest/gtest.h>

#include <set>

namespace hubwatch::schedule {
namespace {

TEST(Scheduler, NeverPolledReposAreDueAtOnceThenOnTheirPhase) {
  Scheduler s({.interval_s = 900, .max_concurrent = 10, .quota = 1000, .window_s = 300});
  s.Track("a/one", 0);
  s.Track("b/two", 0);
  const int64_t now = 1'000'000;
  const auto due = s.TakeDue(now);
  EXPECT_EQ(due.size(), 2u);
  s.Finished("a/one", PollEnd{}, 1, now);
  const int64_t next = *s.next_poll_at("a/one");
  EXPECT_GE(next, now + 900);
  EXPECT_LT(next, now + 1800);
  EXPECT_EQ((next - Scheduler::Phase("a/one", 900)) % 900, 0);
}

TEST(Scheduler, PhasesSpreadReposOverTheInterval) {
  std::set<int64_t> minutes;
  for (int i = 0; i < 200; ++i) {
    minutes.insert(Scheduler::Phase("org/model-" + std::to_string(i), 900) / 60);
  }
  EXPECT_GE(minutes.size(), 14u);  // 15 one-minute buckets; 200 repos fill nearly all of them
  EXPECT_EQ(Scheduler::Phase("google/gemma-2-9b-it", 900),
            Scheduler::Phase("google/gemma-2-9b-it", 900));
}

TEST(Scheduler, CapsConcurrentPolls) {
  Scheduler s({.interval_s = 60, .max_concurrent = 2, .quota = 1000, .window_s = 300});
  for (const char* r : {"a/1", "a/2", "a/3"}) s.Track(r, 0);
  EXPECT_EQ(s.TakeDue(100).size(), 2u);
  EXPECT_TRUE(s.TakeDue(100).empty());
  s.Finished("a/1", PollEnd{}, 1, 101);
  EXPECT_EQ(s.TakeDue(101), std::vector<std::string>{"a/3"});
}

TEST(Scheduler, ASpentBudgetWaitsForTheNextWindow) {
  Scheduler s({.interval_s = 60, .max_concurrent = 10, .quota = 5, .window_s = 300});
  s.Track("a/1", 0);
  s.Track("a/2", 0);
  ASSERT_EQ(s.TakeDue(600).size(), 2u);
  s.Finished("a/1", PollEnd{}, 3, 601);
  s.Finished("a/2", PollEnd{}, 3, 601);  // 6 requests: over the window's 5
  EXPECT_EQ(s.requests().used(601), 6);
  EXPECT_TRUE(s.TakeDue(800).empty());  // both due again (an interval on), but the budget is spent
  EXPECT_EQ(*s.NextWake(800), 900);     // the next window
  EXPECT_EQ(s.TakeDue(900).size(), 2u);
}

TEST(Scheduler, NothingStartsWhileTheHubPausesTheBucket) {
  Scheduler s({.interval_s = 60, .max_concurrent = 10, .quota = 100, .window_s = 300});
  s.Track("a/1", 0);
  s.requests().ObserveHub(/*paused_until=*/1030, std::nullopt, std::nullopt);
  EXPECT_TRUE(s.TakeDue(1000).empty());
  EXPECT_EQ(*s.NextWake(1000), 1030);
  EXPECT_EQ(s.TakeDue(1030), std::vector<std::string>{"a/1"});
}

TEST(Scheduler, AHubQuotaBelowTheConfiguredOneLowersTheBudget) {
  Scheduler s({.interval_s = 60, .max_concurrent = 10, .quota = 800, .window_s = 300});
  EXPECT_EQ(s.requests().budget(), 800);
  s.requests().ObserveHub(std::nullopt, /*quota=*/500,
                          /*window_s=*/300);  // the anonymous api quota
  EXPECT_EQ(s.requests().budget(), 400);
  s.requests().ObserveHub(std::nullopt, /*quota=*/100, /*window_s=*/60);  // 100/min = 500 per 5 min
  EXPECT_EQ(s.requests().budget(), 400);
  s.requests().ObserveHub(std::nullopt, /*quota=*/10000,
                          /*window_s=*/300);  // never above the configured
  EXPECT_EQ(s.requests().budget(), 800);
  s.requests().ObserveHub(std::nullopt, /*quota=*/5, /*window_s=*/300);
  s.Track("a/1", 0);
  s.Track("a/2", 0);
  ASSERT_EQ(s.TakeDue(600).size(), 2u);
  s.Finished("a/1", PollEnd{}, 2, 601);
  s.Finished("a/2", PollEnd{}, 2, 601);  // 4 requests: the budget of 80% of 5
  EXPECT_TRUE(s.TakeDue(800).empty());
  EXPECT_EQ(*s.NextWake(800), 900);
}

TEST(Scheduler, AlignFindsTheNextSlot) {
  Scheduler s({.interval_s = 100});
  const int64_t phase = Scheduler::Phase("x/y", 100);
  EXPECT_EQ(s.Align("x/y", 1000 + phase), 1000 + phase);
  EXPECT_EQ(s.Align("x/y", 1001 + phase), 1100 + phase);
}

}  // namespace
}  // namespace hubwatch::schedule

namespace hubwatch::schedule {
namespace {

using Trigger = store::PollTrigger;

TEST(SchedulerHints, AHintMakesARepoDueNowOnceAndCarriesItsTrigger) {
  Scheduler s({.interval_s = 60,
               .reconcile_interval_s = 3600,
               .max_concurrent = 4,
               .quota = 1000,
               .window_s = 300});
  s.Track("a/one", 5000);
  s.Track("a/two", 5000);
  EXPECT_TRUE(s.TakeDue(100).empty());
  EXPECT_EQ(s.Hint("a/one", Trigger::kListing, 100), Scheduler::HintOutcome::kQueued);
  EXPECT_EQ(s.Hint("a/one", Trigger::kWebhook, 100), Scheduler::HintOutcome::kAlreadyQueued);
  EXPECT_EQ(s.Hint("x/none", Trigger::kListing, 100), Scheduler::HintOutcome::kUntracked);
  EXPECT_EQ(s.TakeDue(100), std::vector<std::string>{"a/one"});
  EXPECT_EQ(s.TakeTrigger("a/one"), Trigger::kListing);  // the first hint's
  EXPECT_EQ(s.TakeTrigger("a/one"), std::nullopt);       // taken once
  EXPECT_EQ(s.TakeTrigger("a/two"), std::nullopt);       // the schedule's own
}

TEST(SchedulerHints, AHintDuringAPollMakesTheRepoDueAgainWhenItEnds) {
  Scheduler s({.interval_s = 60,
               .reconcile_interval_s = 3600,
               .max_concurrent = 4,
               .quota = 1000,
               .window_s = 300});
  s.Track("a/one", 0);
  ASSERT_EQ(s.TakeDue(100).size(), 1u);
  EXPECT_EQ(s.Hint("a/one", Trigger::kWebhook, 101), Scheduler::HintOutcome::kQueued);
  s.Finished("a/one", PollEnd{}, 1, 102, Scheduler::Slots::kReconcile);
  EXPECT_EQ(*s.next_poll_at("a/one"), 102);  // not its reconcile slot: the hint came after
  EXPECT_EQ(s.TakeDue(102), std::vector<std::string>{"a/one"});
  EXPECT_EQ(s.TakeTrigger("a/one"), Trigger::kWebhook);
}

TEST(SchedulerHints, ReconcileSlotsSpreadReposOverTheReconcileWindow) {
  const int64_t reconcile = 21600;
  Scheduler s({.interval_s = 900,
               .reconcile_interval_s = reconcile,
               .max_concurrent = 1000,
               .quota = 100000,
               .window_s = 300});
  const int64_t now = 1'000'000;
  std::set<int64_t> hours;
  for (int i = 0; i < 300; ++i) {
    const std::string repo = "org/model-" + std::to_string(i);
    s.Track(repo, 0);
  }
  for (const std::string& repo : s.TakeDue(now)) {
    s.Finished(repo, PollEnd{}, 1, now, Scheduler::Slots::kReconcile);
    const int64_t next = *s.next_poll_at(repo);
    EXPECT_GE(next, now + 900);
    EXPECT_LT(next, now + 900 + reconcile);
    EXPECT_EQ(next % 60, 0) << "batched by the minute";
    const int64_t past_phase = (next - Scheduler::Phase(repo, reconcile)) % reconcile;
    EXPECT_GE(past_phase, 0);
    EXPECT_LT(past_phase, 60);
    hours.insert((next - now) / 3600);
  }
  EXPECT_EQ(hours.size(), 7u);  // every hour of the six-hour window (and the 900 s past it)
  // The interval's slots for a repo the hints do not cover.
  s.Track("org/unlisted", 0);
  ASSERT_EQ(s.TakeDue(now + 1), std::vector<std::string>{"org/unlisted"});
  s.Finished("org/unlisted", PollEnd{}, 1, now + 1, Scheduler::Slots::kInterval);
  EXPECT_LT(*s.next_poll_at("org/unlisted"), now + 901 + 900);
}

TEST(SchedulerHints, ListingRequestsCountAgainstTheBudget) {
  Scheduler s({.interval_s = 60, .max_concurrent = 4, .quota = 10, .window_s = 300});
  s.Track("a/one", 0);
  s.Spend(10, 600);
  EXPECT_TRUE(s.TakeDue(600).empty());
  EXPECT_EQ(*s.NextWake(600), 900);  // the next window
  EXPECT_EQ(s.TakeDue(900).size(), 1u);
}

TEST(SchedulerHints, ReconcilePollsDueInTheSameMinuteShareOneWake) {
  Scheduler s({.interval_s = 900, .reconcile_interval_s = 21600, .max_concurrent = 1000});
  EXPECT_EQ(s.Batched(0), 0) << "due now stays due now";
  EXPECT_EQ(s.Batched(1'000'001), 1'000'020);
  EXPECT_EQ(s.Batched(1'000'020), 1'000'020);
  // Stored next poll times spread over a minute wake the scheduler once.
  for (int i = 0; i < 30; ++i) {
    s.Track("org/model-" + std::to_string(i), s.Batched(999'961 + 2 * i));  // ... 1'000'019
  }
  EXPECT_EQ(s.NextWake(999'950), 1'000'020);
  EXPECT_EQ(s.TakeDue(1'000'020).size(), 30u);
  // The listing interval under a minute is the quantum; hints off, nothing is rounded.
  s.SetOptions({.interval_s = 10, .reconcile_interval_s = 3600});
  EXPECT_EQ(s.Batched(1'000'001), 1'000'010);
  s.SetOptions({.interval_s = 900});
  EXPECT_EQ(s.Batched(1'000'001), 1'000'001);
}

}  // namespace
}  // namespace hubwatch::schedule
