// hubwatch serve in-process against fakehub: the systemd notify protocol on a test socket,
// stopping, reloading, and a stop in the middle of ingestion.

#include <csignal>
#include <thread>

#include "tests/daemon/service_env.h"

namespace hubwatch::service {
namespace {

using testing::ServiceTest;

TEST_F(ServiceTest, ReadyWatchdogStatusAndStoppingOnTheNotifySocket) {
  Start(Config({"google/gemma-7b-it"}), std::chrono::milliseconds(400));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  EXPECT_TRUE(notify_.WaitFor("STATUS=watching 1 repos"));
  EXPECT_TRUE(notify_.WaitFor("WATCHDOG=1", 5));
  EXPECT_TRUE(notify_.WaitFor("WATCHDOG=1", 5));  // again: every half interval
  service_->Stop();
  EXPECT_TRUE(notify_.WaitFor("STOPPING=1"));
  EXPECT_EQ(Join(), 0);
}

TEST_F(ServiceTest, SigtermStopsWithExitZeroAndTheStoreIsWhole) {
  // Slow Hub: every tree read takes 300 ms, so the signal lands mid-ingestion.
  fakehub::FaultRule slow;
  slow.path_regex = "/tree/";
  slow.action = fakehub::FaultAction::kDelay;
  slow.delay = std::chrono::milliseconds(300);
  hub_->AddFault(slow);
  Start(Config({"meta-llama/Meta-Llama-3-8B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3"}));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const auto t0 = std::chrono::steady_clock::now();
  kill(getpid(), SIGTERM);
  ASSERT_TRUE(notify_.WaitFor("STOPPING=1"));
  EXPECT_EQ(Join(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));

  // Every revision stored is whole: its manifest is there and the cursor is a stored revision.
  auto store = OpenStore();
  for (const char* repo :
       {"meta-llama/Meta-Llama-3-8B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3"}) {
    auto revs = store->ListRevisions(repo);
    ASSERT_TRUE(revs.ok());
    for (const auto& r : revs.value())
      EXPECT_FALSE(store->GetManifest(repo, r.sha)->empty()) << r.sha;
    auto head = store->GetRefHead(repo, "main");
    if (head.value()) {
      EXPECT_TRUE(*store->HasRevision(repo, **head));
    }
  }
}

TEST_F(ServiceTest, SighupReloadsAndPollsAnAddedRepo) {
  cli::DaemonConfig first = Config({"google/gemma-7b-it"});
  cli::DaemonConfig second =
      Config({"google/gemma-7b-it", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"});
  Start(first, std::nullopt, [second] { return Result<cli::DaemonConfig>(second); });
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  kill(getpid(), SIGHUP);
  ASSERT_TRUE(notify_.WaitFor("RELOADING=1"));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  ASSERT_TRUE(notify_.WaitFor("STATUS=watching 2 repos", 20));
  // The added repo is polled at once.
  bool ingested = false;
  for (int i = 0; i < 100 && !ingested; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto store = OpenStore();
    auto revs = store->ListRevisions("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B");
    ingested = revs.ok() && revs->size() == 3;
  }
  EXPECT_TRUE(ingested);
  service_->Stop();
  EXPECT_EQ(Join(), 0);
}

}  // namespace
}  // namespace hubwatch::service
