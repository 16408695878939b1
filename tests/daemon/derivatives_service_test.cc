// `hubwatch serve` following a repo's derivatives: the first round waits for the polls, then
// stores every derivative with its statuses and publishes the lagging ones' advisories.

#include <sys/types.h>
#include <unistd.h>

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

}  // namespace
}  // namespace hubwatch::service::testing
