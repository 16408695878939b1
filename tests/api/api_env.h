#pragma once

// ApiTest: a real ApiServer on 127.0.0.1:0 over a copy of the fixture store (api_fixture.h),
// its io_context running on a thread of its own (the network thread), the read pool on read
// connections of its own, InlineStoreAccess for writes, a real Metrics registry and a recording
// ServiceControl. The test thread talks HTTP (http_client.h) and reads the database through a
// second connection, `inspect()`.

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/api/api_server.h"
#include "daemon/api/subscriptions_handler.h"
#include "daemon/service/metrics.h"
#include "daemon/api/service_control.h"
#include "daemon/service/store_access.h"
#include "tests/api/api_fixture.h"
#include "tests/api/http_client.h"
#include "tracker/advisory/osv.h"
#include "tracker/store/store.h"

namespace hubwatch::api::testing {

inline constexpr const char kAdminToken[] = "s3cret-admin-token";
// The server's clock: three days after ingestion.
inline constexpr int64_t kServerNow = kIngestNow + 3 * 86400;

class RecordingControl : public api::ServiceControl {
 public:
  void RepoAdded(const std::string& id) override {
    std::lock_guard lock(mu_);
    added_.push_back(id);
  }
  void RepoRemoved(const std::string& id) override {
    std::lock_guard lock(mu_);
    removed_.push_back(id);
  }
  schedule::Scheduler::HintOutcome Hint(const std::string& id,
                                        store::PollTrigger trigger) override {
    std::lock_guard lock(mu_);
    hints_.emplace_back(id, trigger);
    if (id.starts_with("untracked/")) return schedule::Scheduler::HintOutcome::kUntracked;
    if (id.starts_with("deferred/")) return schedule::Scheduler::HintOutcome::kDeferred;
    if (id.starts_with("dropped/")) return schedule::Scheduler::HintOutcome::kDropped;
    return hints_.size() > 1 && hints_[hints_.size() - 2].first == id
               ? schedule::Scheduler::HintOutcome::kAlreadyQueued
               : schedule::Scheduler::HintOutcome::kQueued;
  }
  void FollowRulesChanged(const std::vector<std::string>& untracked) override {
    std::lock_guard lock(mu_);
    ++follow_changes_;
    follow_untracked_.insert(follow_untracked_.end(), untracked.begin(), untracked.end());
  }
  api::FollowRuntime follow_runtime(const std::string& rule) const override {
    return {.capped = static_cast<int64_t>(rule.size()), .walk_requests = 2,
            .listing_mode = "owners"};
  }
  store::FollowTargets follow_targets() const override { return nullptr; }
  bool ready() const override { return ready_; }
  std::string status_line() const override { return "watching 2 repos; last cycle 3s ago"; }
  int follow_changes() const {
    std::lock_guard lock(mu_);
    return follow_changes_;
  }
  std::vector<std::string> follow_untracked() const {
    std::lock_guard lock(mu_);
    return follow_untracked_;
  }

  std::vector<std::string> added() const {
    std::lock_guard lock(mu_);
    return added_;
  }
  std::vector<std::string> removed() const {
    std::lock_guard lock(mu_);
    return removed_;
  }
  std::vector<std::pair<std::string, store::PollTrigger>> hints() const {
    std::lock_guard lock(mu_);
    return hints_;
  }
  std::atomic<bool> ready_{true};

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, store::PollTrigger>> hints_;
  std::vector<std::string> added_, removed_;
  int follow_changes_ = 0;
  std::vector<std::string> follow_untracked_;
};

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = ::testing::TempDir() + "hubwatch_api_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    ASSERT_TRUE(CopyDb(FixtureDb(), db_path_).ok());
    auto s = store::Store::Open(db_path_);
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(s).value();
    auto i = store::Store::Open(db_path_);
    ASSERT_TRUE(i.ok()) << i.error().message;
    inspect_ = std::move(i).value();
    access_ = std::make_unique<service::InlineStoreAccess>(*store_);
    config_.listen = "127.0.0.1:0";
    deps_.admin_token = kAdminToken;
    deps_.clock = &clock_;
    deps_.tuning.sse_heartbeat = std::chrono::milliseconds(200);
    // The heavy routes run on the read pool, as in the daemon.
    deps_.open_reader = [path = db_path_] { return store::Store::Open(path); };
  }

  void TearDown() override {
    StopServer();
    inspect_.reset();
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db_path_ + suffix).c_str());
  }

  // Starts the server with config_ and deps_ (SetUp leaves them to be adjusted first).
  void StartServer() {
    StopServer();
    deps_.io = &io_;
    deps_.store = access_.get();
    deps_.metrics = &metrics_;
    deps_.control = &control_;
    auto started = ApiServer::Start(config_, deps_);
    ASSERT_TRUE(started.ok()) << started.error().message;
    server_ = std::move(started).value();
    port_ = server_->port();
    io_.restart();
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
  }

  // Stop() must leave nothing behind: the loop runs out of work and the thread ends.
  void StopServer() {
    if (!server_) return;
    OnNetwork([this] { server_->Stop(); });
    work_.reset();
    thread_.join();
    server_.reset();
  }

  // Runs `f` on the network thread and waits for it.
  void OnNetwork(std::function<void()> f) {
    std::promise<void> done;
    boost::asio::post(io_, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  HttpResponse Get(const std::string& target, const Headers& headers = {}) {
    return Request(port_, "GET", target, "", headers);
  }
  HttpResponse Post(const std::string& target, const std::string& body,
                    const Headers& headers = {}) {
    return Request(port_, "POST", target, body, headers);
  }
  static Headers Admin() { return {{"Authorization", std::string("Bearer ") + kAdminToken}}; }

  store::Store& inspect() { return *inspect_; }

  // Ingests a new head revision of `repo` (through the test's own connection) with `n`
  // behavioral chat template changes summarised as `text`, each advised; returns the advisory
  // ids, oldest first.
  std::vector<std::string> IngestNewRevision(const std::string& repo, int n,
                                             const std::string& text = "chat template edit") {
    const std::vector<store::RevisionRecord> revs = Revisions(repo);
    store::RevisionIngest in;
    in.revision.repo = repo;
    in.revision.sha = std::string(32, 'c') + std::to_string(10'000'000 + next_revision_++);
    in.revision.parents = {revs.front().sha};
    in.revision.authored_at = "2024-12-04T10:00:00.000Z";
    in.revision.title = "Update chat template";
    in.revision.first_seen_at = kServerNow;
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      diff::Change c{diff::ChangeKind::kChatTemplate, diff::Impact::kBehavioral,
                     "tokenizer_config.json", text + " " + std::to_string(i)};
      advisory::AdvisoryContext ctx;
      ctx.repo = repo;
      ctx.revision = in.revision.sha;
      ctx.parent = revs.front().sha;
      ctx.introduced = revs.front().sha;
      ctx.published = "2024-12-04T10:00:00Z";
      ctx.modified = "2024-12-05T13:12:35Z";
      ctx.ordinal = i;
      nlohmann::json osv = advisory::BuildOsv(c, ctx);
      ids.push_back(osv["id"]);
      in.advisories.push_back({.change_ordinal = i,
                               .id = osv["id"],
                               .osv = osv,
                               .published = ctx.published,
                               .modified = ctx.modified});
      in.changes.push_back(std::move(c));
    }
    in.ref_heads = {{"main", in.revision.sha}};
    auto outcome = inspect_->revisions().Ingest(in);
    EXPECT_TRUE(outcome.ok()) << outcome.error().message;
    return ids;
  }
  std::vector<store::RevisionRecord> Revisions(const std::string& repo) {
    auto r = inspect_->revisions().ListRevisions(repo);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<store::RevisionRecord>{};
  }
  std::vector<store::AdvisoryRecord> Advisories(const std::string& repo = "") {
    auto a = inspect_->advisories().ListAdvisories({.repo = repo});
    EXPECT_TRUE(a.ok());
    return a.ok() ? *a : std::vector<store::AdvisoryRecord>{};
  }

  config::ApiConfig config_;
  ManualClock clock_{kServerNow};  // the server's time; a test may set it before StartServer
  ApiDeps deps_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread thread_;
  std::string db_path_;
  std::unique_ptr<store::Store> store_;    // the server's (network thread)
  std::unique_ptr<store::Store> inspect_;  // the test thread's
  std::unique_ptr<service::InlineStoreAccess> access_;
  service::Metrics metrics_;
  RecordingControl control_;
  std::unique_ptr<ApiServer> server_;
  uint16_t port_ = 0;
  int next_revision_ = 0;
};

}  // namespace hubwatch::api::testing
