// ThreadedStoreAccess: writes run on the store thread in submission order, writes queued behind
// a busy store thread share one commit, and one failing write never costs the others theirs.

#include "daemon/service/store_access.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/daemon/wait_until.h"

namespace hubwatch::service {
namespace {

namespace fs = std::filesystem;

class StoreAccessTest : public ::testing::Test {
 protected:
  void SetUp() override { Open({}); }
  void Open(const store::StoreOptions& options) {
    access_.reset();
    dir_ = fs::temp_directory_path() /
           ("hubwatch-store-access-" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "hubwatch.db").string();
    Result<std::unique_ptr<ThreadedStoreAccess>> access =
        ThreadedStoreAccess::Open(io_, path_, options);
    ASSERT_TRUE(access.ok()) << access.error().message;
    access_ = std::move(access).value();
  }
  void TearDown() override {
    access_.reset();
    fs::remove_all(dir_);
  }

  // Holds the store thread inside a write until the returned promise is set.
  std::promise<void> BlockStoreThread() {
    std::promise<void> release;
    std::promise<void> entered;
    auto released = release.get_future().share();
    access_->Write(
        [released, &entered](store::Store&) {
          entered.set_value();
          released.wait();
          return Status::Ok();
        },
        nullptr);
    entered.get_future().wait();
    return release;
  }

  // Queues a write that records `repo` with `next_poll_at`, and whose `then` appends its
  // status to statuses_.
  void QueueRepoWrite(const std::string& repo, int64_t next_poll_at) {
    access_->Write(
        [repo, next_poll_at](store::Store& w) {
          store::RepoRecord r;
          r.id = repo;
          r.refs = {"main"};
          if (Status s = w.repos().AddRepo(r); !s.ok()) return s;
          return w.repos().SetNextPoll(repo, next_poll_at);
        },
        [this](Status s) { statuses_.push_back(s); });
  }

  // Runs the io_context until `n` thens have run.
  void RunThens(size_t n) {
    while (statuses_.size() < n) {
      io_.restart();
      io_.run_one_for(std::chrono::seconds(10));
    }
  }

  int64_t NextPollAt(const std::string& repo) {
    Result<std::optional<store::RepoRecord>> r = access_->reads().repos().GetRepo(repo);
    EXPECT_TRUE(r.ok() && *r) << repo;
    return r.ok() && *r ? (*r)->next_poll_at : -1;
  }

  boost::asio::io_context io_;
  fs::path dir_;
  std::string path_;
  std::unique_ptr<ThreadedStoreAccess> access_;
  std::vector<Status> statuses_;
};

TEST_F(StoreAccessTest, WritesQueuedBehindABusyStoreThreadShareOneCommit) {
  // Warm up: the schema and one row exist, so later writes touch the same few pages.
  QueueRepoWrite("org/model", 1);
  RunThens(1);
  const auto wal = dir_ / "hubwatch.db-wal";
  const uintmax_t before = fs::file_size(wal);

  std::promise<void> release = BlockStoreThread();
  for (int i = 0; i < 20; ++i) QueueRepoWrite("org/model", 100 + i);
  EXPECT_EQ(access_->pending_writes(), 21u);  // the blocker and the 20 queued
  release.set_value();
  RunThens(21);

  for (const Status& s : statuses_) EXPECT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(NextPollAt("org/model"), 119) << "writes run in submission order";
  EXPECT_EQ(access_->pending_writes(), 0u);
  // One commit appends each page it changed once (a frame: page + 24 bytes); 20 commits of
  // the same row would append 20 frames of that page.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  const uintmax_t frame = sqlite3_column_int64(q, 0) + 24;
  sqlite3_finalize(q);
  sqlite3_close(db);
  const uintmax_t frames = (fs::file_size(wal) - before) / frame;
  EXPECT_GE(frames, 1u);
  EXPECT_LE(frames, 6u) << "20 queued writes were committed one by one";
}

TEST_F(StoreAccessTest, AFailingWriteInABatchUndoesOnlyItsOwnWrites) {
  std::promise<void> release = BlockStoreThread();
  QueueRepoWrite("org/a", 10);
  // Writes a repo, then fails: inside the batch its transaction is a savepoint.
  access_->Write(
      [](store::Store& w) -> Status {
        store::RepoRecord r;
        r.id = "org/b";
        r.refs = {"main"};
        if (Status s = w.repos().AddRepo(r); !s.ok()) return s;
        // Ingest is one Transaction: its foreign key fails, and only its writes are undone.
        store::RevisionIngest in;
        in.revision.repo = "org/unknown-repo";  // no such repo: the foreign key fails
        in.revision.sha = "0123456789abcdef0123456789abcdef01234567";
        Result<store::IngestOutcome> ingested = w.revisions().Ingest(in);
        if (ingested.ok()) return Error::Io("expected the ingest to fail");
        return ingested.error();
      },
      [this](Status s) { statuses_.push_back(s); });
  QueueRepoWrite("org/c", 30);
  release.set_value();
  RunThens(3);

  EXPECT_TRUE(statuses_[0].ok());
  EXPECT_FALSE(statuses_[1].ok());
  EXPECT_TRUE(statuses_[2].ok());
  EXPECT_EQ(NextPollAt("org/a"), 10);
  EXPECT_EQ(NextPollAt("org/c"), 30);
  // org/b's AddRepo was autocommit-style inside the batch, before the failing transaction:
  // it is kept, as it would be without batching.
  Result<std::optional<store::RepoRecord>> b = access_->reads().repos().GetRepo("org/b");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->has_value());
  Result<bool> rev = access_->reads().revisions().HasRevision(
      "org/unknown-repo", "0123456789abcdef0123456789abcdef01234567");
  ASSERT_TRUE(rev.ok());
  EXPECT_FALSE(*rev);
}

TEST_F(StoreAccessTest, ALockHeldByAnotherProcessFailsEachWriteAndLosesNoneAfterwards) {
  store::StoreOptions options;
  options.busy_timeout_ms = 50;
  Open(options);
  // Another connection (as another process would) holds the write lock past the busy timeout.
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  std::promise<void> release = BlockStoreThread();
  QueueRepoWrite("org/a", 10);
  QueueRepoWrite("org/b", 20);
  release.set_value();
  RunThens(2);
  for (const Status& s : statuses_) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("locked"), std::string::npos) << s.error().message;
  }
  // The lock ends: the same writes, queued again, are kept.
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  QueueRepoWrite("org/a", 10);
  QueueRepoWrite("org/b", 20);
  RunThens(4);
  EXPECT_TRUE(statuses_[2].ok());
  EXPECT_TRUE(statuses_[3].ok());
  EXPECT_EQ(NextPollAt("org/a"), 10);
  EXPECT_EQ(NextPollAt("org/b"), 20);
}

TEST_F(StoreAccessTest, WriteSoonRidesAlongWithTheNextWriteInSubmissionOrder) {
  QueueRepoWrite("org/model", 1);
  RunThens(1);
  auto set_next_poll = [](int64_t at) {
    return [at](store::Store& w) { return w.repos().SetNextPoll("org/model", at); };
  };
  access_->WriteSoon(set_next_poll(50));
  EXPECT_EQ(access_->pending_writes(), 1u);
  EXPECT_EQ(NextPollAt("org/model"), 1) << "a WriteSoon waits for company or for kSoonDelay";
  QueueRepoWrite("org/model", 60);  // submitted later: must win
  RunThens(2);
  EXPECT_EQ(NextPollAt("org/model"), 60);
  EXPECT_EQ(access_->pending_writes(), 0u);
  EXPECT_EQ(access_->failed_soon_writes(), 0u);

  // Alone, it is written within kSoonDelay (waited for here, not timed: the store thread's
  // timer is real time).
  access_->WriteSoon(set_next_poll(70));
  EXPECT_TRUE(
      hubwatch::testing::WaitUntil([&] { return NextPollAt("org/model") == 70; }, kSoonDelay * 10));
}

TEST_F(StoreAccessTest, ShutdownWritesWhatWriteSoonQueuedAndCountsFailures) {
  QueueRepoWrite("org/model", 1);
  RunThens(1);
  access_->WriteSoon([](store::Store& w) { return w.repos().SetNextPoll("org/model", 80); });
  access_->WriteSoon([](store::Store&) { return Status(Error::Io("injected")); });
  access_->Shutdown();
  EXPECT_EQ(access_->failed_soon_writes(), 1u);
  EXPECT_EQ(NextPollAt("org/model"), 80);
  access_->WriteSoon([](store::Store&) { return Status::Ok(); });  // after Shutdown: refused
  EXPECT_EQ(access_->failed_soon_writes(), 2u);
}

}  // namespace
}  // namespace hubwatch::service
