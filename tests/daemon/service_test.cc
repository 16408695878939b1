// hubwatch serve in-process against fakehub: the systemd notify protocol on a test socket,
// stopping, reloading (also during an ingest: CI runs this suite under ThreadSanitizer), a stop
// in the middle of ingestion, and a start refused for bad input.

#include <atomic>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "daemon/config/follow_rule.h"
#include "tests/daemon/service_env.h"
#include "tests/fakehub/synthetic.h"

namespace hubwatch::service {
namespace {

using testing::ServiceTest;

constexpr const char* kLlama = "meta-llama/Meta-Llama-3-8B-Instruct";   // 5 commits
constexpr const char* kMistral = "mistralai/Mistral-7B-Instruct-v0.3";  // 7 commits

// Every tree read answers `delay` late.
void SlowTreeReads(fakehub::FakeHub* hub, std::chrono::milliseconds delay) {
  fakehub::FaultRule slow;
  slow.path_regex = "/tree/";
  slow.action = fakehub::FaultAction::kDelay;
  slow.delay = delay;
  hub->AddFault(slow);
}

// Revisions stored for `repo` (-1 when the store cannot be read).
int64_t StoredRevisions(store::Store& store, const std::string& repo) {
  auto revs = store.revisions().ListRevisions(repo);
  return revs.ok() ? static_cast<int64_t>(revs->size()) : -1;
}

// Waits for `done(store)` on a fresh read connection to the service's store.
template <class Done>
bool StoreReaches(const std::string& db, Done done) {
  return hubwatch::testing::WaitUntil([&] {
    auto store = store::Store::Open(db);
    return store.ok() && done(**store);
  });
}

TEST_F(ServiceTest, ReadyWatchdogStatusAndStoppingOnTheNotifySocket) {
  manual_time_ = true;
  Start(Config({"google/gemma-7b-it"}), std::chrono::milliseconds(400));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  EXPECT_TRUE(notify_.WaitFor("STATUS=watching 1 repos"));
  AdvanceTime(std::chrono::milliseconds(200));  // half the watchdog interval
  EXPECT_TRUE(notify_.WaitFor("WATCHDOG=1", 5));
  AdvanceTime(std::chrono::milliseconds(200));
  EXPECT_TRUE(notify_.WaitFor("WATCHDOG=1", 5));  // again: every half interval
  service_->Stop();
  EXPECT_TRUE(notify_.WaitFor("STOPPING=1"));
  EXPECT_EQ(Join(), 0);
}

TEST_F(ServiceTest, SigtermStopsWithExitZeroAndTheStoreIsWhole) {
  SlowTreeReads(hub_.get(), std::chrono::milliseconds(300));  // the signal lands mid-ingestion
  Start(Config({kLlama, kMistral}));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  // Mid-ingestion: some revision is committed (so the test sees what a stop leaves), not all.
  ASSERT_TRUE(StoreReaches(dir_ + "/hubwatch.db", [](store::Store& s) {
    return StoredRevisions(s, kLlama) + StoredRevisions(s, kMistral) >= 1;
  }));
  const auto t0 = std::chrono::steady_clock::now();
  kill(getpid(), SIGTERM);
  ASSERT_TRUE(notify_.WaitFor("STOPPING=1"));
  EXPECT_EQ(Join(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));

  // Every revision stored is whole: its manifest is there and the cursor is a stored revision.
  auto store = OpenStore();
  const int64_t stored = StoredRevisions(*store, kLlama) + StoredRevisions(*store, kMistral);
  EXPECT_GE(stored, 1);
  EXPECT_LT(stored, 5 + 7) << "the stop did not land during the ingestion";
  for (const char* repo : {kLlama, kMistral}) {
    auto revs = store->revisions().ListRevisions(repo);
    ASSERT_TRUE(revs.ok());
    for (const auto& r : revs.value())
      EXPECT_FALSE(store->revisions().GetManifest(repo, r.sha)->empty()) << r.sha;
    auto head = store->repos().GetRefHead(repo, "main");
    if (head.value()) {
      EXPECT_TRUE(*store->revisions().HasRevision(repo, **head));
    }
  }
}

TEST_F(ServiceTest, SighupReloadsAndPollsAnAddedRepo) {
  config::DaemonConfig first = Config({"google/gemma-7b-it"});
  config::DaemonConfig second =
      Config({"google/gemma-7b-it", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"});
  Start(first, std::nullopt, [second] { return Result<config::DaemonConfig>(second); });
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  kill(getpid(), SIGHUP);
  ASSERT_TRUE(notify_.WaitFor("RELOADING=1"));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  ASSERT_TRUE(notify_.WaitFor("STATUS=watching 2 repos", 20));
  // The added repo is polled at once.
  EXPECT_TRUE(StoreReaches(dir_ + "/hubwatch.db", [](store::Store& s) {
    return StoredRevisions(s, "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B") == 3;
  }));
  service_->Stop();
  EXPECT_EQ(Join(), 0);
}

TEST_F(ServiceTest, AReloadNamesTheKeysThatNeedARestartInOneLineAndKeepsThem) {
  captured_log_ = std::make_shared<testing::CapturedLog>();
  config::DaemonConfig first = Config({"google/gemma-7b-it"});
  config::DaemonConfig second = first;
  second.api.listen = "127.0.0.1:1";
  second.store = dir_ + "/elsewhere.db";
  second.poll.interval_s = 7200;  // applied at once
  Start(first, std::nullopt, [second] { return Result<config::DaemonConfig>(second); });
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  kill(getpid(), SIGHUP);
  ASSERT_TRUE(notify_.WaitFor("RELOADING=1"));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  const auto restart = captured_log_->Matching("next restart");
  ASSERT_EQ(restart.size(), 1u);
  EXPECT_NE(restart[0].find("store, listen"), std::string::npos) << restart[0];
  EXPECT_EQ(captured_log_->Matching("reloaded: watching 1 repos every 7200 s").size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/elsewhere.db"));  // the running store stays
  service_->Stop();
  EXPECT_EQ(Join(), 0);
}

// The poller's options are replaced on the network thread while the store thread builds and
// commits revisions with them; under ThreadSanitizer this is the race a shared options object
// had. Whatever the reloads do, every revision arrives once.
TEST_F(ServiceTest, ReloadsDuringAnIngestChangeNothingItIsDoing) {
  SlowTreeReads(hub_.get(), std::chrono::milliseconds(100));
  config::DaemonConfig config = Config({kLlama, kMistral});
  std::atomic<int> reloads{0};
  Start(config, std::nullopt, [config, &reloads] {
    config::DaemonConfig next = config;
    const int n = ++reloads;
    next.poll.advise_cosmetic = n % 2 == 1;
    next.poll.settle_window_s = n % 3;
    next.poll.interval_s = 3600 + n;
    return Result<config::DaemonConfig>(next);
  });
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  const std::string db = dir_ + "/hubwatch.db";
  // Twenty reloads while the ingest runs, each signal sent once the reload before it began (a
  // SIGHUP during a reload is coalesced into one more: each still makes one).
  for (int i = 0; i < 20; ++i) {
    kill(getpid(), SIGHUP);
    ASSERT_TRUE(notify_.WaitFor("RELOADING=1"));
  }
  EXPECT_TRUE(StoreReaches(db, [](store::Store& s) {
    return StoredRevisions(s, kLlama) == 5 && StoredRevisions(s, kMistral) == 7;
  }));
  EXPECT_GE(reloads.load(), 2);
  service_->Stop();
  EXPECT_EQ(Join(), 0);
  auto store = OpenStore();
  auto changes = store->revisions().ListChanges({});
  ASSERT_TRUE(changes.ok());
  for (const store::ChangeRecord& c : *changes) {
    EXPECT_NE(c.change.kind, diff::ChangeKind::kError) << c.repo << " " << c.change.summary;
  }
}

TEST_F(ServiceTest, BadInputFailsTheStartWithExitTwo) {
  for (auto edit : std::vector<std::function<void(config::DaemonConfig&)>>{
           [](config::DaemonConfig& c) { c.api.listen = "garbage"; },
           [this](config::DaemonConfig& c) { c.hub.token_file = WriteFile("empty", "\n"); },
           [this](config::DaemonConfig& c) { c.store = dir_ + "/missing/hubwatch.db"; },
       }) {
    config::DaemonConfig config = Config({"google/gemma-7b-it"});
    edit(config);
    Start(config);
    EXPECT_EQ(Join(), 2);
    EXPECT_TRUE(notify_.WaitFor("STATUS=failed: ", 5));
  }
}

// The scheduler decides when a repo is polled next and the store records that decision: the
// stored time is the time the repo is polled at, before a restart and after it.
TEST_F(ServiceTest, TheStoredNextPollIsWhenTheRepoIsPolledAcrossARestart) {
  manual_time_ = true;
  const std::string repo = "google/gemma-7b-it";
  const std::string db = dir_ + "/hubwatch.db";
  auto stored_next = [&]() -> int64_t {
    auto store = store::Store::Open(db);
    if (!store.ok()) return -1;
    auto r = (*store)->repos().GetRepo(repo);
    return r.ok() && *r ? (*r)->next_poll_at : -1;
  };
  auto polls = [&] { return ServiceMetric("hubwatch_polls_total{outcome=\"ok\"}"); };
  auto advance_to = [&](int64_t t) {
    AdvanceTime(std::chrono::seconds(t - time_.UnixSeconds()));
  };

  config::DaemonConfig config = Config({repo});
  config.poll.hints = false;  // every poll is the schedule's: one slot an interval apart
  Start(config);
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  const int64_t start = time_.UnixSeconds();
  // The first poll is due at once; its end decides the next, which reaches the store.
  ASSERT_TRUE(hubwatch::testing::WaitUntil(
      [&] { return polls() == 1 && stored_next() > start; }, std::chrono::seconds(30)));
  const int64_t next = stored_next();
  EXPECT_GE(next, start + 3600);  // the interval, then the repo's slot in it
  EXPECT_LT(next, start + 2 * 3600);
  advance_to(next - 1);
  EXPECT_EQ(PollsRunning(), 0);  // a second early: not polled
  EXPECT_EQ(polls(), 1);
  advance_to(next);
  ASSERT_TRUE(hubwatch::testing::WaitUntil(
      [&] { return polls() == 2 && stored_next() > next; }, std::chrono::seconds(30)));
  const int64_t after = stored_next();
  EXPECT_EQ(after, next + 3600);  // the same slot an interval on
  service_->Stop();
  ASSERT_EQ(Join(), 0);

  // A restart reads the schedule back from the store: the repo waits for its stored time.
  Start(config);
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  advance_to(after - 1);
  EXPECT_EQ(PollsRunning(), 0);
  EXPECT_EQ(polls(), 0);
  advance_to(after);
  EXPECT_TRUE(hubwatch::testing::WaitUntil(
      [&] { return polls() == 1 && stored_next() == after + 3600; }, std::chrono::seconds(30)));
  service_->Stop();
  EXPECT_EQ(Join(), 0);
}

// hubwatch_repos counts what the scheduler polls, however the repos came: a follow rule tracks
// and untracks them in rounds of its own.
TEST_F(ServiceTest, TheReposGaugeCountsTheReposAFollowRuleTracks) {
  manual_time_ = true;
  fakehub::SyntheticOptions o;
  o.repos = 6;
  o.commits = 1;
  o.prefix = "gauge/model-";
  ASSERT_TRUE(hub_->AddRepos(fakehub::GenerateSyntheticRepos(o)).ok());
  config::DaemonConfig config = Config({"google/gemma-7b-it"});
  config.poll.hints = true;
  config.poll.reconcile_interval_s = 3600;
  Result<config::FollowRule> rule =
      config::ParseFollowRule(nlohmann::json::parse(R"({"owner": "gauge"})"), "test rule");
  ASSERT_TRUE(rule.ok()) << rule.error().message;
  config.follow.push_back(*rule);
  Start(config);
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  auto readyz = [&] { return api::testing::Request(service_->api_port(), "GET", "/readyz").body; };
  ASSERT_TRUE(AdvanceUntil([&] { return readyz().find("watching 7 repos") != std::string::npos; }))
      << readyz();
  EXPECT_EQ(ServiceMetric("hubwatch_repos"), 7);
}

// A repo removed while its poll runs: the poll still counts as running (in /readyz, for a
// stop), and when it fails the log says it is not polled again, not a next poll at a time long
// past.
TEST_F(ServiceTest, APollOfARepoRemovedWhileItRunsEndsWithoutANextPoll) {
  manual_time_ = true;
  captured_log_ = std::make_shared<testing::CapturedLog>();
  const std::string repo = "nobody/not-published-yet";  // fakehub answers 404
  fakehub::FaultRule slow;
  slow.path_regex = repo;
  slow.action = fakehub::FaultAction::kDelay;
  slow.delay = std::chrono::milliseconds(1500);
  hub_->AddFault(slow);
  config::DaemonConfig config = Config({"google/gemma-7b-it"});
  config.api.admin_token_file = WriteFile("admin", "remove-test-admin-token");
  Start(config);
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  const api::testing::Headers admin = {{"Authorization", "Bearer remove-test-admin-token"},
                                       {"Content-Type", "application/json"}};
  ASSERT_EQ(api::testing::Request(service_->api_port(), "POST", "/api/v1/repos",
                                  R"({"id": ")" + repo + R"("})", admin)
                .status,
            201);
  ASSERT_TRUE(AdvanceUntil([&] {
    for (const fakehub::LoggedRequest& r : hub_->RequestLog()) {
      if (r.path.find(repo) != std::string::npos) return true;
    }
    return false;
  }));
  ASSERT_EQ(api::testing::Request(service_->api_port(), "DELETE", "/api/v1/repos/" + repo, "",
                                  admin)
                .status,
            204);
  EXPECT_GE(PollsRunning(), 1) << "the poll of the removed repo still runs";
  ASSERT_TRUE(hubwatch::testing::WaitUntil([&] {
    return !captured_log_->Matching(repo + ": ").empty() && PollsRunning() == 0;
  }));
  const std::vector<std::string> lines = captured_log_->Matching(repo + ": ");
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  EXPECT_EQ(all.find("next poll in"), std::string::npos) << all;
  EXPECT_NE(all.find("no longer tracked, not polled again"), std::string::npos) << all;
}

}  // namespace
}  // namespace hubwatch::service
