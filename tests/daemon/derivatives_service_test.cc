// `hubwatch serve` following a repo's derivatives: the first round waits for the polls, then
// stores every derivative with its statuses and publishes the lagging ones' advisories.

#include <sys/types.h>
#include <unistd.h>

#include <csignal>
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

}  // namespace
}  // namespace hubwatch::service::testing
