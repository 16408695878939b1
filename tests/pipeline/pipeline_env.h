#pragma once

// Test wiring for the pipeline: fakehub with the incident fixtures on loopback, the real hub
// client (curl on Asio), a SQLite store in a temp file, and PollOnce() to run one poll to the
// end.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "tests/fakehub/fakehub.h"
#include "tests/pipeline/seconds_clock.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

class PipelineTest : public ::testing::Test {
 protected:
  static constexpr const char kToken[] = "hf_pipeline_test_token";

  void SetUp() override {
    fakehub::FakeHubOptions options;
    options.fixtures_dir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
    options.fixtures_dirs = fixtures_dirs_;
    options.users = {{kToken, "hubwatch-tests", true}};  // the gated fixtures need a login
    options.extra_repos = std::move(extra_repos_);
    if (replay_start_) {  // a frozen replay clock: tests move it with AdvanceReplayClock
      options.mode = fakehub::Mode::kReplay;
      options.replay_start = replay_start_;
      options.speed = 0;
    }
    auto hub = fakehub::FakeHub::Start(std::move(options));
    ASSERT_TRUE(hub.ok()) << hub.error().message;
    fakehub_ = std::move(hub).value();
    db_path_ = ::testing::TempDir() + "hubwatch_pipeline_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    RemoveDb();
    OpenStore();
    stack_ = std::make_unique<hub::HubStack>(io_, ClientOptions());
  }

  // Retries stay on, but with millisecond waits: backoff itself is tested with a fake clock in
  // the hub client's tests; here no test may sleep through one.
  hub::HubClientOptions ClientOptions() const {
    hub::HubClientOptions client;
    client.settings.endpoint = fakehub_->endpoint();
    client.settings.token = hub::Secret(kToken);
    client.retry.max_retries = 2;
    client.retry.base = std::chrono::milliseconds(1);
    client.retry.cap = std::chrono::milliseconds(2);
    return client;
  }

  void TearDown() override {
    poller_.reset();
    stack_.reset();
    store_.reset();
    RemoveDb();
  }

  void OpenStore() {
    poller_.reset();
    store_.reset();
    auto s = store::Store::Open(db_path_);
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(s).value();
  }

  // added_at 0 (the default): nothing the repo holds is from before it was tracked.
  void Track(const std::string& repo, std::vector<std::string> refs = {"main"},
             int64_t added_at = 0) {
    ASSERT_TRUE(
        store_->repos().AddRepo({.id = repo, .refs = std::move(refs), .added_at = added_at}).ok());
  }

  PollReport PollOnce(const std::string& repo, PollerOptions options = {}) {
    if (options.clock == &SystemClock()) options.clock = &clock_;
    if (!options.log && std::getenv("HUBWATCH_TEST_LOG")) {
      options.log = [](std::string_view line) {
        std::fprintf(stderr, "poller: %.*s\n", static_cast<int>(line.size()), line.data());
      };
    }
    poller_ = std::make_unique<Poller>(stack_->client(), *store_, options);
    std::optional<PollReport> report;
    poller_->Poll(repo, [&](PollReport r) { report = std::move(r); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!report && std::chrono::steady_clock::now() < deadline) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(100));
    }
    if (std::getenv("HUBWATCH_TEST_LOG")) {
      for (const store::ChangeRecord& c : Changes(repo)) {
        std::fprintf(stderr, "change %s %s %s: %s\n", c.sha.substr(0, 7).c_str(),
                     std::string(diff::KindName(c.change.kind)).c_str(), c.change.path.c_str(),
                     c.change.summary.c_str());
      }
    }
    if (!report) {
      ADD_FAILURE() << "poll of " << repo << " did not finish in 60 s";
      return {};
    }
    return *report;
  }

  std::vector<store::ChangeRecord> Changes(const std::string& repo) {
    auto c = store_->revisions().ListChanges({.repo = repo});
    EXPECT_TRUE(c.ok());
    return c.ok() ? *c : std::vector<store::ChangeRecord>{};
  }

  std::vector<store::RevisionRecord> Revisions(const std::string& repo) {
    auto r = store_->revisions().ListRevisions(repo);
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::move(r).value() : std::vector<store::RevisionRecord>{};
  }

  std::vector<store::AdvisoryRecord> Advisories(const std::string& repo) {
    auto a = store_->advisories().ListAdvisories({.repo = repo});
    EXPECT_TRUE(a.ok());
    return a.ok() ? std::move(a).value() : std::vector<store::AdvisoryRecord>{};
  }

  std::vector<std::string> AdvisoryIds() {
    auto a = store_->advisories().ListAdvisories({});
    EXPECT_TRUE(a.ok());
    std::vector<std::string> ids;
    if (a.ok()) {
      for (const store::AdvisoryRecord& r : a.value()) ids.push_back(r.id);
    }
    return ids;
  }

  void RemoveDb() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db_path_ + suffix).c_str());
  }

  std::vector<fakehub::Repo> extra_repos_;  // served besides the fixtures (set before SetUp)
  std::vector<std::string> fixtures_dirs_;  // more fixture directories (set before SetUp)
  std::optional<int64_t> replay_start_;     // set before SetUp: replay mode, clock stopped here
  boost::asio::io_context io_;
  std::unique_ptr<fakehub::FakeHub> fakehub_;
  std::unique_ptr<hub::HubStack> stack_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Poller> poller_;
  std::string db_path_;
  int64_t now_ = 1733145155;  // 2024-12-02T13:12:35Z
  SecondsClock clock_{now_};
};

}  // namespace hubwatch::pipeline
