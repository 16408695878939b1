// Change hints end to end: `hubwatch serve` over fakehub in replay mode, where a commit "lands"
// when the replay clock passes its date. The listing hint and the Hub webhook each poll only the
// repo that moved; a listing that fails leaves the reconcile poll to find the change, a miss.
// The service's time is the test's (manual_time_): a listing interval passes when the test says.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/api/http_client.h"
#include "tests/daemon/service_env.h"
#include "tests/subscriptions/test_support.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::service::testing {
namespace {

using api::testing::HttpResponse;
using api::testing::Request;
using hubwatch::testing::WaitUntil;

constexpr const char* kLlama = "meta-llama/Meta-Llama-3-8B-Instruct";  // 4th commit 04-19 09:14
constexpr const char* kGemma = "google/gemma-7b-it";                   // last commit 04-05
constexpr const char kHookSecret[] = "hub-hook-secret-0123";

class HintsTest : public ServiceTest {
 protected:
  // fakehub replaying from 2024-04-19 00:00Z: Llama 3 has 3 of its commits, Gemma all of its.
  void SetUp() override {
    manual_time_ = true;
    ServiceTest::SetUp();
    hub_.reset();
    fakehub::FakeHubOptions options;
    options.fixtures_dir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
    options.users = {{kToken, "service-tests", true}};
    options.mode = fakehub::Mode::kReplay;
    options.replay_start = *advisory::ParseTime("2024-04-19T00:00:00Z");
    auto hub = fakehub::FakeHub::Start(std::move(options));
    ASSERT_TRUE(hub.ok()) << hub.error().message;
    hub_ = std::move(hub).value();
  }

  config::DaemonConfig HintsConfig() {
    config::DaemonConfig c = Config({kLlama, kGemma});
    c.poll.hints = true;
    c.poll.interval_s = 1;  // the listing's interval
    c.poll.reconcile_interval_s = 3600;
    return c;
  }

  std::optional<store::RepoRecord> Repo(const std::string& id) {
    auto s = OpenStore();
    if (!s) return std::nullopt;
    auto r = s->repos().GetRepo(id);
    return r.ok() ? *r : std::nullopt;
  }

  // Revisions stored for `repo`; 0 when the store cannot be read.
  size_t Revisions(const std::string& repo) {
    auto s = store::Store::Open(dir_ + "/hubwatch.db");
    if (!s.ok()) return 0;
    auto revs = (*s)->revisions().ListRevisions(repo);
    return revs.ok() ? revs->size() : 0;
  }
  bool WaitForRevisions(const std::string& repo, size_t n) {
    return WaitUntil([&] { return Revisions(repo) >= n; });
  }

  // The repo row is written when the poll ends, after its revisions: wait for it to say how,
  // then for the poll's end on the loop (its metrics and log line) to be done too.
  std::optional<store::PollTrigger> WaitForFoundBy(const std::string& repo,
                                                   store::PollTrigger want) {
    std::optional<store::PollTrigger> found;
    WaitUntil([&] {
      if (auto r = Repo(repo)) found = r->last_change_found_by;
      return found == want;
    });
    EXPECT_TRUE(WaitUntil([&] { return PollsRunning() == 0; }));
    return found;
  }

  // Listing rounds ended so far, whatever their outcome.
  double ListingRounds() {
    return ServiceMetric("hubwatch_listing_rounds_total{outcome=\"ok\"}") +
           ServiceMetric("hubwatch_listing_rounds_total{outcome=\"error\"}");
  }

  // One listing interval (HintsConfig's 1 s) passes; waits for the round it starts to end.
  // REQUIRES: no round is reading (each test waits for the one it started).
  void NextListingRound() {
    const double before = ListingRounds();
    AdvanceTime(std::chrono::seconds(1));
    ASSERT_TRUE(WaitUntil([&] { return ListingRounds() > before; })) << "no listing round ended";
  }

  // Refs requests fakehub answered for `repo` since the log was cleared.
  int RefsRequests(const std::string& repo) {
    int n = 0;
    for (const fakehub::LoggedRequest& r : hub_->RequestLog()) {
      if (r.path.find("/api/models/" + repo + "/refs") != std::string::npos) ++n;
    }
    return n;
  }
  int ListingRequests() {
    int n = 0;
    for (const fakehub::LoggedRequest& r : hub_->RequestLog()) n += r.path == "/api/models";
    return n;
  }

  // Waits for the first polls of both repos and for the listing round of the start to end;
  // with `another_round` (the listing every second), for one more listing round after them.
  void WaitForFirstPolls(bool another_round = true) {
    ASSERT_TRUE(notify_.WaitFor("READY=1"));
    ASSERT_TRUE(WaitForRevisions(kLlama, 3));
    ASSERT_TRUE(WaitForRevisions(kGemma, 1));
    ASSERT_TRUE(WaitUntil([&] { return ListingRounds() >= 1 && PollsRunning() == 0; }));
    if (another_round) NextListingRound();
    hub_->ClearLog();
  }
};

TEST_F(HintsTest, TheListingPollsOnlyTheRepoThatMovedAndSaysSo) {
  Start(HintsConfig());
  WaitForFirstPolls();
  NextListingRound();
  NextListingRound();
  EXPECT_EQ(ServiceMetric("hubwatch_hint_polls_total{source=\"listing\"}"), 0);
  EXPECT_EQ(PollsRunning(), 0);
  EXPECT_EQ(RefsRequests(kLlama) + RefsRequests(kGemma), 0) << "nothing moved: no repo polled";
  EXPECT_GE(ListingRequests(), 1);

  hub_->AdvanceReplayClock(std::chrono::hours(10));  // Llama 3's 4th commit lands
  NextListingRound();  // one listing interval, and no more, passes before it is found
  ASSERT_TRUE(WaitForRevisions(kLlama, 4));
  EXPECT_GE(RefsRequests(kLlama), 1);
  EXPECT_EQ(RefsRequests(kGemma), 0);
  EXPECT_EQ(WaitForFoundBy(kLlama, store::PollTrigger::kListing), store::PollTrigger::kListing);

  const uint16_t port = service_->api_port();
  const std::string metrics = Request(port, "GET", "/metrics").body;
  EXPECT_NE(metrics.find("hubwatch_hints_used_total{source=\"listing\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hubwatch_listing_mode{mode=\"feed\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("hubwatch_hub_window_requests{bucket=\"api\"}"), std::string::npos);
  EXPECT_EQ(metrics.find("hubwatch_hint_misses_total"), std::string::npos);
  const nlohmann::json repos = Request(port, "GET", "/api/v1/repos").json();
  bool seen = false;
  for (const auto& r : repos["repos"]) {
    if (r["id"] != kLlama) continue;
    seen = true;
    EXPECT_EQ(r["last_change_found_by"], "listing");
    EXPECT_FALSE(r["last_reconciled_at"].is_null());  // its first poll was the schedule's
  }
  EXPECT_TRUE(seen);
}

TEST_F(HintsTest, AHubWebhookPollsTheRepoAtOnceAndIsCheckedFirst) {
  config::DaemonConfig config = HintsConfig();
  config.poll.interval_s = 3600;  // one listing round, at the start
  config.poll.reconcile_interval_s = 3600;
  config.hub.webhook_secret_file = WriteFile("hub-hook.secret", std::string(kHookSecret) + "\n");
  Start(config);
  WaitForFirstPolls(false);
  const uint16_t port = service_->api_port();
  const std::string payload =
      R"({"event": {"action": "update", "scope": "repo.content"},
          "repo": {"type": "model", "name": "meta-llama/Meta-Llama-3-8B-Instruct", "id": "x",
                   "private": false, "headSha": "0000000000000000000000000000000000000000",
                   "owner": {"id": "y"}},
          "webhook": {"id": "w", "version": 3},
          "updatedRefs": [{"ref": "refs/heads/main", "oldSha": null, "newSha": null}]})";
  EXPECT_EQ(Request(port, "POST", "/api/v1/hub-webhooks", payload).status, 401);
  EXPECT_EQ(
      Request(port, "POST", "/api/v1/hub-webhooks", payload, {{"X-Webhook-Secret", "nope"}}).status,
      403);
  EXPECT_EQ(RefsRequests(kLlama), 0);  // refused before anything was queued

  hub_->AdvanceReplayClock(std::chrono::hours(10));
  const auto sent = std::chrono::steady_clock::now();
  HttpResponse accepted =
      Request(port, "POST", "/api/v1/hub-webhooks", payload, {{"X-Webhook-Secret", kHookSecret}});
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(100));
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  EXPECT_EQ(accepted.json()["repo"], kLlama);
  ASSERT_TRUE(WaitForRevisions(kLlama, 4));  // no time passes: the webhook's poll runs at once
  EXPECT_EQ(WaitForFoundBy(kLlama, store::PollTrigger::kWebhook), store::PollTrigger::kWebhook);
  EXPECT_EQ(RefsRequests(kGemma), 0);
  // Other scopes and repos we do not track are ignored.
  const std::string discussion =
      R"({"event": {"action": "create", "scope": "discussion"}, "repo": {"type": "model",
          "name": "google/gemma-7b-it"}})";
  EXPECT_EQ(
      Request(port, "POST", "/api/v1/hub-webhooks", discussion, {{"X-Webhook-Secret", kHookSecret}})
          .status,
      204);
  EXPECT_EQ(Request(port, "POST", "/api/v1/hub-webhooks", "{not json",
                    {{"X-Webhook-Secret", kHookSecret}})
                .status,
            400);
}

// A holder of the webhook secret floods one repo: one poll now, one at the end of the 60 s gap,
// every other webhook merged into those; said once in the log and counted in /metrics.
TEST_F(HintsTest, AWebhookFloodForOneRepoPollsItOnce) {
  config::DaemonConfig config = HintsConfig();
  config.poll.interval_s = 3600;  // one listing round, at the start
  config.poll.reconcile_interval_s = 3600;
  config.hub.webhook_secret_file = WriteFile("hub-hook.secret", std::string(kHookSecret) + "\n");
  captured_log_ = std::make_shared<CapturedLog>();
  Start(config);
  WaitForFirstPolls(false);
  const uint16_t port = service_->api_port();
  const std::string payload =
      R"({"event": {"action": "update", "scope": "repo.content"},
          "repo": {"type": "model", "name": "meta-llama/Meta-Llama-3-8B-Instruct"}})";
  std::map<std::string, int> said;
  for (int i = 0; i < 150; ++i) {  // within the route's burst of 200: all accepted
    HttpResponse r =
        Request(port, "POST", "/api/v1/hub-webhooks", payload, {{"X-Webhook-Secret", kHookSecret}});
    ASSERT_EQ(r.status, 202) << r.body;
    ++said[r.json()["poll"].get<std::string>()];
    if (i == 0) {
      EXPECT_EQ(r.json()["poll"], "queued");
    }
  }
  EXPECT_EQ(said["queued"], 1);
  EXPECT_LE(said["deferred"], 1);
  EXPECT_EQ(said["queued"] + said["deferred"] + said["already queued"], 150);
  EXPECT_TRUE(WaitUntil([&] { return RefsRequests(kLlama) >= 1 && PollsRunning() == 0; }));
  EXPECT_EQ(RefsRequests(kLlama), 1);
  const std::string metrics = Request(port, "GET", "/metrics").body;
  EXPECT_NE(metrics.find("hubwatch_hub_webhooks_total{outcome=\"duplicate\"} " +
                         std::to_string(said["already queued"])),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hubwatch_hint_polls_total{source=\"webhook\"} " +
                         std::to_string(said["queued"] + said["deferred"])),
            std::string::npos)
      << metrics;
  EXPECT_EQ(captured_log_->Matching("hub webhooks: ").size(), 1u);  // at most one a minute
}

TEST_F(HintsTest, WhenTheListingFailsTheReconcilePollFindsTheChangeAndCountsAMiss) {
  fakehub::FaultRule down;
  down.path_regex = "^/api/models$";
  down.action = fakehub::FaultAction::kStatus;
  down.status = 400;  // not retried: the round fails at once
  hub_->AddFault(down);
  config::DaemonConfig config = HintsConfig();
  config.poll.reconcile_interval_s = 4;
  captured_log_ = std::make_shared<CapturedLog>();
  Start(config);
  WaitForFirstPolls();
  hub_->AdvanceReplayClock(std::chrono::hours(10));
  // The failing listing hints nothing: within a reconcile interval (4 s), the reconcile finds it.
  ASSERT_TRUE(AdvanceUntil([&] { return Revisions(kLlama) >= 4; }, 8));
  EXPECT_EQ(WaitForFoundBy(kLlama, store::PollTrigger::kReconcile), store::PollTrigger::kReconcile);
  const std::string metrics = Request(service_->api_port(), "GET", "/metrics").body;
  EXPECT_NE(metrics.find("hubwatch_hint_misses_total 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("hubwatch_listing_rounds_total{outcome=\"error\"}"), std::string::npos);
  EXPECT_FALSE(captured_log_->Matching("hint miss").empty());
  EXPECT_FALSE(captured_log_->Matching("listing round failed").empty());
}

// Publication apart from notification: the first polls find the repos' past, which is stored and
// published (advisories, feeds, osv.dev) but sent only to the subscription that asks for
// history (backfill); the commit that lands later is news, sent to both.
TEST_F(HintsTest, ASubscriberIsNotifiedOfWhatChangesAfterTrackingAndOfThePastOnlyOnRequest) {
  subscriptions::testing::Receiver receiver;
  config::DaemonConfig config = HintsConfig();
  const std::string secret = WriteFile("hook.secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  config.subscriptions.push_back(
      {.url = receiver.url("/news"), .secret_file = secret, .min_impact = "cosmetic"});
  config.subscriptions.push_back({.url = receiver.url("/history"),
                                  .secret_file = secret,
                                  .min_impact = "cosmetic",
                                  .backfill = true});
  config.webhooks.allow_private_targets = true;
  config.poll.advise_cosmetic = true;
  Start(config);
  WaitForFirstPolls();
  auto advisory_ids = [&] {
    std::set<std::string> ids;
    if (auto s = OpenStore()) {
      const auto listed = s->advisories().ListAdvisories({});
      if (listed.ok()) {
        for (const auto& a : *listed) ids.insert(a.id);
      }
    }
    return ids;
  };
  auto delivered = [&](const std::string& target) {
    std::set<std::string> ids;
    for (const auto& r : receiver.requests()) {
      if (r.target != target) continue;
      const nlohmann::json osv = nlohmann::json::parse(r.body, nullptr, false);
      if (osv.is_object()) ids.insert(osv.value("id", ""));
    }
    return ids;
  };
  auto wait_for = [&](const std::string& target, size_t n) {
    WaitUntil([&] { return delivered(target).size() >= n; });
    return delivered(target);
  };
  const std::set<std::string> past = advisory_ids();
  ASSERT_FALSE(past.empty());
  EXPECT_EQ(wait_for("/history", past.size()), past);
  EXPECT_TRUE(delivered("/news").empty()) << "the past is not news";

  hub_->AdvanceReplayClock(std::chrono::hours(10));  // Llama 3's 4th commit lands
  NextListingRound();                                // which the listing shows
  ASSERT_TRUE(WaitForRevisions(kLlama, 4));
  std::set<std::string> news;
  WaitUntil([&] {
    for (const std::string& id : advisory_ids()) {
      if (!past.count(id)) news.insert(id);
    }
    return !news.empty();
  });
  ASSERT_FALSE(news.empty());
  EXPECT_EQ(wait_for("/news", news.size()), news);
  std::set<std::string> all = past;
  all.insert(news.begin(), news.end());
  EXPECT_EQ(wait_for("/history", all.size()), all);
}

}  // namespace
}  // namespace hubwatch::service::testing
