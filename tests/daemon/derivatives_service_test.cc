// `hubwatch serve` following a repo's derivatives: the first round waits for the polls, then
// stores every derivative with its statuses and publishes the lagging ones' advisories; 1,000
// spam children newer than the real derivatives do not keep those from being checked against
// upstream's next fix. The service's time is the test's (manual_time_): a round waiting for the
// polls, or for its interval, starts when the test moves the clock.

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <set>

#include "tests/daemon/service_env.h"

namespace hubwatch::service::testing {
namespace {

using hubwatch::testing::WaitUntil;

constexpr char kUpstream[] = "meta-llama/Meta-Llama-3-8B-Instruct";
// How long the watch waits before looking again while polls run (derivative_watch.cc).
constexpr auto kBusyRetry = std::chrono::seconds(5);

class DerivativesServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    fixtures_dirs_ = {std::string(HUBWATCH_FIXTURES_DIR) + "/hub-derivatives"};
    manual_time_ = true;
    ServiceTest::SetUp();
  }

  std::vector<derivatives::DerivativeRecord> Stored() {
    auto list = OpenStore()->derivatives().List(kUpstream);
    return list.ok() ? std::move(list).value() : std::vector<derivatives::DerivativeRecord>{};
  }

  // The first polls (`polls` of them) end; the watch, which found them running when it first
  // looked, looks again after its busy retry and starts its first round.
  void StartFirstRound(int polls) {
    ASSERT_TRUE(WaitUntil([&] {
      return ServiceMetric("hubwatch_polls_total{outcome=\"ok\"}") >= polls && PollsRunning() == 0;
    }));
    AdvanceTime(kBusyRetry);
  }
};

TEST_F(DerivativesServiceTest, ARoundFollowsThePollAndStoresEveryDerivativeWithItsStatuses) {
  captured_log_ = std::make_shared<CapturedLog>();
  config::DaemonConfig config = Config({kUpstream, "google/gemma-7b-it"});
  config.repos[0].derivatives.enabled = true;
  Start(config);
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  StartFirstRound(2);
  const std::vector<derivatives::DerivativeRecord> stored = hubwatch::testing::WaitFor(
      [&] { return Stored(); }, [](const auto& s) { return s.size() >= 6; });
  ASSERT_EQ(stored.size(), 6u);
  std::map<std::string, int> lagging;
  for (const derivatives::DerivativeRecord& r : stored) {
    EXPECT_TRUE(r.error.empty()) << r.id << ": " << r.error;
    EXPECT_FALSE(r.lags.empty()) << r.id;
    for (const derivatives::AdvisoryLag& lag : r.lags) {
      lagging[r.id] += lag.status == derivatives::LagStatus::kLagging;
    }
  }
  EXPECT_GT(lagging["aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT"], 0);
  EXPECT_GT(lagging["fernhollow-quants/Meta-Llama-3-8B-Instruct-GGUF"], 0);
  EXPECT_EQ(lagging["tidewater-ml/Llama-3-8B-Instruct-Tidewater"], 0);
  auto store = OpenStore();
  auto advisories = store->advisories().ListAdvisories(
      {.repo = "aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT"});
  ASSERT_TRUE(advisories.ok());
  EXPECT_EQ(static_cast<int>(advisories->size()),
            lagging["aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT"]);

  // Both polls ended before the round began: derivatives never go ahead of a poll.
  const std::vector<std::string> lines = captured_log_->lines();
  size_t last_poll = 0, first_round = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("new revision(s)") != std::string::npos) last_poll = i;
    if (lines[i].find("derivatives of " + std::string(kUpstream)) != std::string::npos &&
        first_round == lines.size()) {
      first_round = i;
    }
  }
  EXPECT_GT(last_poll, 0u);
  EXPECT_LT(last_poll, first_round);
  ASSERT_LT(first_round, lines.size());
  EXPECT_NE(lines[first_round].find("6 listed, 6 read at a new head (0 failed)"), std::string::npos)
      << lines[first_round];
  service_->Stop();
  EXPECT_EQ(Join(), 0);
}

// A reload that drops the upstream while its round waits on the Hub: the round ends, the daemon
// goes on and never starts another round for it. (The round's end used to schedule the repo
// again; with the interval passed, the next tick looked it up among the followed repos and threw.)
TEST_F(DerivativesServiceTest, AReloadThatDropsTheRepoDuringItsRoundStartsNoFurtherRound) {
  captured_log_ = std::make_shared<CapturedLog>();
  config::DaemonConfig config = Config({kUpstream, "google/gemma-7b-it"});
  config.repos[0].derivatives.enabled = true;
  config.poll.derivatives_interval_s = 1;  // rounds due again at once, were it still followed
  config::DaemonConfig dropped = Config({"google/gemma-7b-it"});
  dropped.poll.derivatives_interval_s = 1;
  fakehub::FaultRule slow;  // the round's listings wait: the reload lands inside it
  slow.path_regex = "^/api/models$";
  slow.action = fakehub::FaultAction::kDelay;
  slow.delay = std::chrono::milliseconds(1500);
  hub_->AddFault(slow);
  auto listings = [&] {
    int n = 0;
    for (const fakehub::LoggedRequest& r : hub_->RequestLog()) {
      n += r.path == "/api/models" && r.query.find("base_model") != std::string::npos;
    }
    return n;
  };
  Start(config, std::nullopt, [dropped] { return Result<config::DaemonConfig>(dropped); });
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  StartFirstRound(2);
  ASSERT_TRUE(WaitUntil([&] { return listings() > 0; })) << "the round never started";
  kill(getpid(), SIGHUP);
  ASSERT_TRUE(notify_.WaitFor("RELOADING=1"));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  auto rounds_ended = [&] {  // a round's last line: stored, not stored, or the listing failed
    size_t n = 0;
    for (const std::string& line :
         captured_log_->Matching("derivatives of " + std::string(kUpstream) + ": ")) {
      n += line.find("could not be read") == std::string::npos;  // one derivative, not the end
    }
    return n;
  };
  ASSERT_TRUE(WaitUntil([&] { return rounds_ended() > 0; }));
  ASSERT_EQ(rounds_ended(), 1u) << "the round never ended";
  const int after_round = listings();
  // Three intervals, then the watch's longest sleep, pass: each timer due runs (a round would
  // start inside the step, the lookup that threw would throw inside it), and none starts one.
  for (int i = 0; i < 3; ++i) AdvanceTime(std::chrono::seconds(1));
  AdvanceTime(std::chrono::seconds(60));
  service_->Stop();
  EXPECT_EQ(Join(), 0);
  EXPECT_EQ(listings(), after_round);
  EXPECT_EQ(rounds_ended(), 1u);
}

// Issue 28, item 2: 1,000 throwaway children of the upstream, newer than every real derivative,
// then a new upstream fix. Newest first, the listing's `max` (200) held only spam: the real
// derivatives were never listed again and kept their old statuses. Now every real derivative
// has its status on the new fix within two rounds of its publication.
TEST_F(DerivativesServiceTest,
       AThousandSpamChildrenLeaveEveryRealDerivativeCheckedWithinTwoRounds) {
  captured_log_ = std::make_shared<CapturedLog>();
  config::DaemonConfig config = Config({kUpstream});
  config.repos[0].derivatives.enabled = true;  // max 200, every relation
  config.poll.interval_s = 1;  // the Hub's listing, read every second, hints at the pushed fix
  config.poll.reconcile_interval_s = 3600;
  config.poll.derivatives_interval_s = 1;
  config.poll.api_quota = 1'000'000;
  config.poll.resolvers_quota = 1'000'000;
  Start(config);
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  const std::set<std::string> real = {"aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT",
                                      "tidewater-ml/Llama-3-8B-Instruct-Tidewater",
                                      "larkspur-nlp/Llama-3-8B-Instruct-Larkspur-DPO",
                                      "pinegrove-research/llama-3-8b-instruct-sql-lora",
                                      "fernhollow-quants/Meta-Llama-3-8B-Instruct-GGUF",
                                      "copperleaf-merges/Llama-3-8B-Instruct-Base-SLERP"};
  auto stored = [&] { return Stored(); };
  // The listing's rounds (every second) and the derivatives' (once the polls end) go on as the
  // clock moves.
  ASSERT_TRUE(AdvanceUntil([&] { return stored().size() >= real.size(); }));
  ASSERT_EQ(stored().size(), real.size());
  auto rounds = [&] {  // rounds started so far: each lists the fine-tunes first, on one page
    size_t n = 0;
    for (const fakehub::LoggedRequest& r : hub_->RequestLog()) {
      n += r.path == "/api/models" && r.query.find("finetune") != std::string::npos;
    }
    return n;
  };
  auto newest_fix = [&]() -> std::string {
    auto fixes = OpenStore()->derivatives().UpstreamFixes(kUpstream);
    return fixes.ok() && !fixes->empty() ? fixes->back().advisory_id : "";
  };
  const std::string old_fix = newest_fix();
  ASSERT_FALSE(old_fix.empty());

  ASSERT_TRUE(hub_->AddSpamChildren(kUpstream, 1000, "adapter").ok());
  ASSERT_TRUE(hub_->PushCommit(kUpstream,
                               {{"generation_config.json",
                                 R"({"bos_token_id": 128000, "eos_token_id": [128001, 128009],
                                     "do_sample": true, "temperature": 0.5, "max_length": 4096,
                                     "top_p": 0.9, "transformers_version": "4.40.0.dev0"})"}},
                               "Lower the default temperature")
                  .ok());
  std::string fix;
  AdvanceUntil([&] {  // a listing round shows the push; its poll publishes the fix
    fix = newest_fix();
    return !fix.empty() && fix != old_fix;
  });
  ASSERT_NE(fix, old_fix) << "the fix was never published";
  // Rounds that started before the fix was stored cannot see it. Each round is due an interval
  // after the last one ended and starts only when the clock moves, which it does not from here
  // to the next line: every round counted from now started after the publication.
  const size_t at_fix = rounds();

  // Every real derivative current, with a status on `fix`.
  auto unchecked = [&] {
    std::set<std::string> left = real;
    for (const derivatives::DerivativeRecord& r : stored()) {
      const bool on_fix = std::any_of(r.lags.begin(), r.lags.end(),
                                      [&](const auto& lag) { return lag.advisory_id == fix; });
      if (r.current && on_fix) left.erase(r.id);
    }
    return left;
  };
  std::set<std::string> left;
  size_t after = 0;
  AdvanceUntil(
      [&] {
        left = unchecked();
        after = rounds() - at_fix;  // read second: a round starting in between counts
        return left.empty() || after > 2;
      },
      120);
  EXPECT_TRUE(left.empty()) << left.size() << " real derivatives unchecked, e.g. "
                            << (left.empty() ? "" : *left.begin()) << ", after " << after
                            << " rounds started since the fix was published";
  EXPECT_LE(after, 2u);
  RecordProperty("rounds_started_after_the_fix", std::to_string(after));
  const std::vector<derivatives::DerivativeRecord> now = stored();
  EXPECT_LE(now.size(), 200u) << "spam fills only the places left";
  auto tally = OpenStore()->derivatives().Tally(kUpstream);
  ASSERT_TRUE(tally.ok());
  EXPECT_GE(tally->checked, static_cast<int64_t>(real.size()));
  service_->Stop();
  EXPECT_EQ(Join(), 0);
}

}  // namespace
}  // namespace hubwatch::service::testing
