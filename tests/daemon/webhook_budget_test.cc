// Hub webhooks cannot spend the Hub budget: anyone holding the webhook secret can send them, so
// the polls they start get a share of the budget of their own, and each repo is polled for
// webhooks at most once per gap (schedule/scheduler.h). Time is the scheduler's `now` and the
// poll loop's ManualClock: nothing here sleeps.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/app/poll_wiring.h"
#include "daemon/config/config.h"
#include "daemon/service/metrics.h"
#include "daemon/schedule/poll_loop.h"
#include "daemon/schedule/poll_metrics.h"
#include "daemon/schedule/scheduler.h"
#include "tests/daemon/service_env.h"
#include "tests/hub/manual_timer_clock.h"

namespace hubwatch::schedule {
namespace {

using Outcome = Scheduler::HintOutcome;
using Trigger = store::PollTrigger;

constexpr int64_t kWindowStart = 1'000'200;  // a multiple of the 300 s window
constexpr int64_t kFar = kWindowStart + 20'000;

// An interval of an hour: a poll that ends is next due at a reconcile slot an hour or more away.
SchedulerOptions HintsOn(int64_t quota, int max_concurrent = 8) {
  return {.interval_s = 3600,
          .reconcile_interval_s = 21600,
          .max_concurrent = max_concurrent,
          .quota = quota,
          .window_s = 300};
}

// Starts what is due at `now` and ends each poll at once with `requests` requests, the next one
// at a reconcile slot an hour or more away; returns the polls started, by their trigger.
std::map<Trigger, int> RunDue(Scheduler& s, int64_t now, int64_t requests = 1) {
  std::map<Trigger, int> started;
  for (std::vector<std::string> due = s.TakeDue(now); !due.empty(); due = s.TakeDue(now)) {
    for (const std::string& repo : due) {
      ++started[s.TakeTrigger(repo).value_or(Trigger::kReconcile)];
      s.Finished(repo, PollEnd{}, requests, now, Scheduler::Slots::kReconcile);
    }
  }
  return started;
}

// 2,000 webhooks in 10 s once made 399 polls of one repo. Now: 20 a second for ten minutes make
// one poll per 60 s gap, and the last webhook still has its poll queued.
TEST(WebhookBudget, ManyWebhooksForOneRepoPollItOncePerGap) {
  Scheduler s(HintsOn(800));
  s.Track("org/hot", kFar);
  std::vector<int64_t> starts;
  std::map<Outcome, int> outcomes;
  for (int64_t now = kWindowStart; now < kWindowStart + 600; ++now) {
    for (int i = 0; i < 20; ++i) ++outcomes[s.Hint("org/hot", Trigger::kWebhook, now)];
    const std::map<Trigger, int> started = RunDue(s, now);
    for (const auto& [trigger, n] : started) {
      EXPECT_EQ(trigger, Trigger::kWebhook);
      for (int k = 0; k < n; ++k) starts.push_back(now);
    }
  }
  ASSERT_EQ(starts.size(), 10u) << "one poll per 60 s, not one per webhook";
  for (size_t i = 1; i < starts.size(); ++i) EXPECT_EQ(starts[i] - starts[i - 1], 60);
  EXPECT_EQ(outcomes[Outcome::kQueued], 1);
  EXPECT_EQ(outcomes[Outcome::kDeferred], 10);  // the first webhook after each poll began
  EXPECT_EQ(outcomes[Outcome::kAlreadyQueued], 12000 - 11);
  EXPECT_EQ(outcomes[Outcome::kDropped], 0);
  // The webhooks after the last poll began are not lost: their poll is due when the gap ends.
  EXPECT_EQ(s.next_poll_at("org/hot"), starts.back() + 60);
  // The second window reserved one request for each poll deferred in it: +301, ..., +541.
  EXPECT_EQ(s.requests().webhook_used(kWindowStart + 599), 5);
}

TEST(WebhookBudget, AWebhookDuringItsPollIsDeferredToTheGapsEndNotLost) {
  Scheduler s(HintsOn(800));
  s.Track("org/hot", kFar);
  const int64_t t = kWindowStart;
  ASSERT_EQ(s.Hint("org/hot", Trigger::kWebhook, t), Outcome::kQueued);
  ASSERT_EQ(s.TakeDue(t), std::vector<std::string>{"org/hot"});
  ASSERT_EQ(s.TakeTrigger("org/hot"), Trigger::kWebhook);
  EXPECT_EQ(s.Hint("org/hot", Trigger::kWebhook, t + 5), Outcome::kDeferred);
  EXPECT_EQ(s.Hint("org/hot", Trigger::kWebhook, t + 6), Outcome::kAlreadyQueued);
  s.Finished("org/hot", PollEnd{}, 1, t + 10, Scheduler::Slots::kReconcile);
  EXPECT_EQ(s.next_poll_at("org/hot"), t + 60);
  EXPECT_TRUE(s.TakeDue(t + 59).empty());
  EXPECT_EQ(s.TakeDue(t + 60), std::vector<std::string>{"org/hot"});
  EXPECT_EQ(s.TakeTrigger("org/hot"), Trigger::kWebhook);
  s.Finished("org/hot", PollEnd{}, 1, t + 61, Scheduler::Slots::kReconcile);
  // The Hub's listing is not held to a webhook's gap: it brings the deferred poll forward.
  EXPECT_EQ(s.Hint("org/hot", Trigger::kWebhook, t + 70), Outcome::kDeferred);
  EXPECT_EQ(s.next_poll_at("org/hot"), t + 120);
  EXPECT_EQ(s.Hint("org/hot", Trigger::kListing, t + 71), Outcome::kQueued);
  EXPECT_EQ(s.next_poll_at("org/hot"), t + 71);
  EXPECT_EQ(s.TakeDue(t + 71), std::vector<std::string>{"org/hot"});
  EXPECT_EQ(s.TakeTrigger("org/hot"), Trigger::kListing);
  // A poll that webhooks did not start (the listing's, the schedule's) opens no gap: at +119
  // the gap is the webhook poll's at +60, not the listing's at +71 (which would say +131).
  s.Finished("org/hot", PollEnd{}, 1, t + 72, Scheduler::Slots::kReconcile);
  EXPECT_EQ(s.Hint("org/hot", Trigger::kWebhook, t + 119), Outcome::kDeferred);
  EXPECT_EQ(s.next_poll_at("org/hot"), t + 120);
  s.Track("org/cold", kFar);
  ASSERT_EQ(s.Hint("org/cold", Trigger::kListing, t + 130), Outcome::kQueued);
  EXPECT_EQ(RunDue(s, t + 130), (std::map<Trigger, int>{{Trigger::kWebhook, 1},     // hot
                                                        {Trigger::kListing, 1}}));  // cold
  EXPECT_EQ(s.Hint("org/cold", Trigger::kWebhook, t + 132), Outcome::kQueued);
  EXPECT_EQ(s.Hint("org/hot", Trigger::kWebhook, t + 132), Outcome::kDeferred);
}

// 2,000 webhooks over 2,000 repos get the webhook share (25% of 800: 200 polls); the 500 repos
// the schedule has due 10 s later are all polled in the same window.
TEST(WebhookBudget, ManyWebhooksOverManyReposSpendOnlyTheirShare) {
  Scheduler s(HintsOn(800));
  EXPECT_EQ(s.requests().webhook_budget(), 200);
  for (int i = 0; i < 2000; ++i) s.Track("hook/model-" + std::to_string(i), kFar);
  for (int i = 0; i < 500; ++i) s.Track("sched/model-" + std::to_string(i), kWindowStart + 10);
  std::map<Outcome, int> outcomes;
  for (int i = 0; i < 2000; ++i) {
    ++outcomes[s.Hint("hook/model-" + std::to_string(i), Trigger::kWebhook, kWindowStart)];
  }
  EXPECT_EQ(outcomes[Outcome::kQueued], 200);
  EXPECT_EQ(outcomes[Outcome::kDropped], 1800);
  std::map<Trigger, int> polls;
  for (int64_t now = kWindowStart; now < kWindowStart + 300; ++now) {
    for (const auto& [trigger, n] : RunDue(s, now)) polls[trigger] += n;
  }
  EXPECT_EQ(polls[Trigger::kWebhook], 200);
  EXPECT_EQ(polls[Trigger::kReconcile], 500) << "the schedule's polls get the rest of the window";
  EXPECT_EQ(s.requests().used(kWindowStart + 299), 700);
  EXPECT_EQ(s.requests().webhook_used(kWindowStart + 299), 200);
  // The next window has a share again.
  EXPECT_EQ(s.Hint("hook/model-1999", Trigger::kWebhook, kWindowStart + 300), Outcome::kQueued);
}

TEST(WebhookBudget, APollThatFindsAChangeCountsAllItsRequestsAgainstTheShare) {
  Scheduler s(HintsOn(40));  // a share of 10
  for (int i = 0; i < 20; ++i) s.Track("hook/model-" + std::to_string(i), kFar);
  ASSERT_EQ(s.Hint("hook/model-0", Trigger::kWebhook, kWindowStart), Outcome::kQueued);
  ASSERT_EQ(s.Hint("hook/model-1", Trigger::kWebhook, kWindowStart), Outcome::kQueued);
  RunDue(s, kWindowStart, /*requests=*/4);  // each found a revision: refs, tree, files
  EXPECT_EQ(s.requests().webhook_used(kWindowStart), 8);
  EXPECT_EQ(s.Hint("hook/model-2", Trigger::kWebhook, kWindowStart), Outcome::kQueued);
  EXPECT_EQ(s.Hint("hook/model-3", Trigger::kWebhook, kWindowStart), Outcome::kQueued);
  EXPECT_EQ(s.Hint("hook/model-4", Trigger::kWebhook, kWindowStart), Outcome::kDropped);
}

TEST(WebhookBudget, TheShareFollowsTheBudgetAndTheConfiguredPercent) {
  Scheduler s(HintsOn(800));
  s.requests().ObserveHub(std::nullopt, /*quota=*/500, /*window_s=*/300);  // budget 400
  EXPECT_EQ(s.requests().webhook_budget(), 100);
  SchedulerOptions none = HintsOn(800);
  none.webhook_percent = 0;
  s.SetOptions(none);
  EXPECT_EQ(s.requests().webhook_budget(), 0);
  s.Track("org/one", kFar);
  EXPECT_EQ(s.Hint("org/one", Trigger::kWebhook, kWindowStart), Outcome::kDropped);
  EXPECT_EQ(s.Hint("org/one", Trigger::kListing, kWindowStart), Outcome::kQueued);
}

TEST(WebhookBudget, TheShareIsTheConfigsPollWebhookBudgetPercent) {
  Result<config::DaemonConfig> d = config::ParseConfig("{}", "");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->poll.webhook_budget_percent, 25);
  EXPECT_EQ(app::SchedulerOptionsFor(*d, true).webhook_percent, 25);
  Result<config::DaemonConfig> none =
      config::ParseConfig(R"({"poll": {"webhook_budget_percent": 0}})", "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(app::SchedulerOptionsFor(*none, true).webhook_percent, 0);
  for (const char* bad : {R"({"poll": {"webhook_budget_percent": 101}})",
                          R"({"poll": {"webhook_budget_percent": -1}})",
                          R"({"poll": {"webhook_budget_percent": "25%"}})"}) {
    Result<config::DaemonConfig> c = config::ParseConfig(bad, "");
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.error().message.find("poll.webhook_budget_percent"), std::string::npos)
        << c.error().message;
  }
}

// The poll loop says what it merged, deferred and dropped: one line at once, then at most one a
// minute with the counts since.
TEST(WebhookBudget, ThePollLoopLogsWebhooksNotPolledAtMostOnceAMinute) {
  boost::asio::io_context io;
  ManualClock clock(kWindowStart);
  hubwatch::testing::ManualTimerClock timers(io, clock);  // the loop is never started: no timer
  auto captured = std::make_shared<service::testing::CapturedLog>();
  auto log = std::make_shared<spdlog::logger>("webhook-budget-test", captured);
  service::Metrics metrics;
  PollMetrics poll_metrics(metrics, clock);
  PollLoop loop(io, timers, log, poll_metrics, {});
  loop.SetOptions(HintsOn(8));  // a share of 2
  for (int i = 0; i < 5; ++i) loop.scheduler().Track("org/model-" + std::to_string(i), kFar);
  EXPECT_EQ(loop.Hint("org/model-0", Trigger::kWebhook), Outcome::kQueued);
  EXPECT_TRUE(captured->Matching("hub webhooks:").empty()) << "a queued poll is not news";
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(loop.Hint("org/model-0", Trigger::kWebhook), Outcome::kAlreadyQueued);
  }
  EXPECT_EQ(loop.Hint("org/model-1", Trigger::kWebhook), Outcome::kQueued);
  for (int i = 2; i < 5; ++i) {
    EXPECT_EQ(loop.Hint("org/model-" + std::to_string(i), Trigger::kWebhook), Outcome::kDropped);
  }
  std::vector<std::string> lines = captured->Matching("hub webhooks:");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "hub webhooks: 1 merged into a poll already queued, 0 deferred (a repo is polled for "
            "webhooks at most once per 60 s), 0 dropped");

  clock.Advance(std::chrono::seconds(59));
  EXPECT_EQ(loop.Hint("org/model-4", Trigger::kWebhook), Outcome::kDropped);
  EXPECT_EQ(captured->Matching("hub webhooks:").size(), 1u);
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(loop.Hint("org/model-4", Trigger::kWebhook), Outcome::kDropped);
  lines = captured->Matching("hub webhooks:");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("99 merged into a poll already queued, 0 deferred"), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find("5 dropped (the webhooks' share of the budget, 2 of 8 requests per "
                          "300 s, was spent;"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find("in the last 60 s"), std::string::npos) << lines[1];
  // Polls the webhooks queued are counted with the other hinted polls.
  EXPECT_NE(metrics.RenderPrometheus().find("hubwatch_hint_polls_total{source=\"webhook\"} 2"),
            std::string::npos);
}

}  // namespace
}  // namespace hubwatch::schedule
