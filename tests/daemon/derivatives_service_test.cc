// `hubwatch serve` following a repo's derivatives: the first round waits for the polls, then
// stores every derivative with its statuses and publishes the lagging ones' advisories; 1,000
// spam children newer than the real derivatives do not keep those from being checked against
// upstream's next fix.

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <set>
#include <thread>

#include "tests/daemon/service_env.h"

namespace hubwatch::service::testing {
namespace {

constexpr char kUpstream[] = "meta-llama/Meta-Llama-3-8B-Instruct";

class DerivativesServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    fixtures_dirs_ = {std::string(HUBWATCH_FIXTURES_DIR) + "/hub-derivatives"};
    ServiceTest::SetUp();
  }
};

TEST_F(DerivativesServiceTest, ARoundFollowsThePollAndStoresEveryDerivativeWithItsStatuses) {
  captured_log_ = std::make_shared<CapturedLog>();
  DaemonConfig config = Config({kUpstream, "google/gemma-7b-it"});
  config.repos[0].derivatives.enabled = true;
  Start(config);
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  std::vector<derivatives::DerivativeRecord> stored;
  for (int i = 0; i < 300 && stored.size() < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto store = OpenStore();
    auto list = store->derivatives().List(kUpstream);
    if (list.ok()) stored = std::move(list).value();
  }
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
  DaemonConfig config = Config({kUpstream, "google/gemma-7b-it"});
  config.repos[0].derivatives.enabled = true;
  config.poll.derivatives_interval_s = 1;  // rounds due again at once, were it still followed
  DaemonConfig dropped = Config({"google/gemma-7b-it"});
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
  Start(config, std::nullopt, [dropped] { return Result<DaemonConfig>(dropped); });
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  for (int i = 0; i < 300 && listings() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(listings(), 0) << "the round never started";
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
  for (int i = 0; i < 300 && rounds_ended() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(rounds_ended(), 1u) << "the round never ended";
  const int after_round = listings();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // three intervals
  EXPECT_EQ(listings(), after_round);
  EXPECT_EQ(rounds_ended(), 1u);
  service_->Stop();
  EXPECT_EQ(Join(), 0);
}

// Issue 28, item 2: 1,000 throwaway children of the upstream, newer than every real derivative,
// then a new upstream fix. Newest first, the listing's `max` (200) held only spam: the real
// derivatives were never listed again and kept their old statuses. Now every real derivative
// has its status on the new fix within two rounds of its publication.
TEST_F(DerivativesServiceTest,
       AThousandSpamChildrenLeaveEveryRealDerivativeCheckedWithinTwoRounds) {
  captured_log_ = std::make_shared<CapturedLog>();
  DaemonConfig config = Config({kUpstream});
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
  auto stored = [&] {
    auto list = OpenStore()->derivatives().List(kUpstream);
    return list.ok() ? std::move(list).value() : std::vector<derivatives::DerivativeRecord>{};
  };
  for (int i = 0; i < 300 && stored().size() < real.size(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
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
  const size_t at_push = rounds();  // a round started before the push cannot see the fix
  ASSERT_TRUE(hub_->PushCommit(kUpstream,
                               {{"generation_config.json",
                                 R"({"bos_token_id": 128000, "eos_token_id": [128001, 128009],
                                     "do_sample": true, "temperature": 0.5, "max_length": 4096,
                                     "top_p": 0.9, "transformers_version": "4.40.0.dev0"})"}},
                               "Lower the default temperature")
                  .ok());
  std::string fix;
  for (int i = 0; i < 300 && (fix.empty() || fix == old_fix); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fix = newest_fix();
  }
  ASSERT_NE(fix, old_fix) << "the fix was never published";

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
  std::set<std::string> left = unchecked();
  size_t after = rounds() - at_push;  // read second: a round starting in between counts
  for (int i = 0; i < 600 && !left.empty() && after <= 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    left = unchecked();
    after = rounds() - at_push;
  }
  EXPECT_TRUE(left.empty()) << left.size() << " real derivatives unchecked, e.g. "
                            << (left.empty() ? "" : *left.begin()) << ", after " << after
                            << " rounds started since the fix was pushed";
  EXPECT_LE(after, 2u);
  RecordProperty("rounds_started_after_the_push", std::to_string(after));
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
