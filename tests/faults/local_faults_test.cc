// The fault matrix, local side: the database locked by another process, a full disk, a short
// write, a slow-loris API client and a 100 MB request body, against the real in-process
// `hubwatch serve`. As for the Hub faults: the daemon keeps running, the fault is counted, nothing
// is lost and it recovers when the fault ends.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>


#include "tests/faults/fault_env.h"
#include "tests/faults/fault_vfs.h"

namespace hubwatch::service::testing {
namespace {

using api::testing::RawConnection;

// Another process holding an exclusive SQLite transaction on `db` until destroyed.
class LockHolder {
 public:
  explicit LockHolder(const std::string& db) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      execlp("python3", "python3", "-c",
             "import sqlite3, sys, time\n"
             "db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)\n"
             "db.execute('BEGIN EXCLUSIVE')\n"
             "print('locked', flush=True)\n"
             "time.sleep(60)\n",
             db.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];  // kept open while the child lives: it must not die of SIGPIPE
    char buf[16] = {};
    const ssize_t n = read(out_, buf, sizeof buf - 1);  // blocks until locked (or exit)
    locked_ = n > 0 && std::string(buf).starts_with("locked");
  }
  ~LockHolder() { Release(); }
  bool locked() const { return locked_; }
  void Release() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);  // the OS drops its locks
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    close(out_);
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool locked_ = false;
};

// Another process holds the database's write lock: the store thread's writes wait out the busy
// timeout and fail, which /metrics shows at once (pending writes, busy seconds); the API keeps
// answering (WAL readers are not blocked); nothing is lost once the lock is released.
TEST_F(FaultMatrixTest, DatabaseLockedByAnotherProcess) {
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ASSERT_TRUE(AllArrived(kRepo));
  LockHolder lock(dir_ + "/hubwatch.db");
  ASSERT_TRUE(lock.locked());
  ASSERT_TRUE(hub_->SuperSquash(kRepo).ok());  // a new revision to write, under the lock
  // The writes queue behind the lock (each waits out the store's 5 s busy timeout, then fails);
  // the stuck work is visible in /metrics and the API keeps answering (WAL readers are not
  // blocked).
  ASSERT_TRUE(Eventually(
      [&] {
        return Metric("hubwatch_store_pending_writes") >= 1 &&
               Metric("hubwatch_store_busy_seconds") >= 1;
      },
      8));
  EXPECT_TRUE(Healthy());
  EXPECT_EQ(Revisions(kRepo).size(), FixtureCommits(kRepo));
  lock.Release();
  EXPECT_TRUE(Eventually([&] {
    return Revisions(kRepo).size() == FixtureCommits(kRepo) + 1 && StateOf(kRepo) == "ok";
  })) << RepoState(kRepo);
  EXPECT_EQ(ErrorChanges(kRepo), 0u);
}

// The store's writes fail through the test VFS (fault_vfs.h: the store's file seam; no root, no
// mount) from the moment the service is ready, while the first poll's refs call is held back:
// the first ingest cannot be written, the poll fails and is counted, nothing is half-written and
// the database stays whole; once the fault ends every revision arrives.
class DiskFaultTest : public FaultMatrixTest {
 protected:
  void RunWith(hubwatch::testing::FaultVfs::Fault fault) {
    hubwatch::testing::FaultVfs& vfs = hubwatch::testing::FaultVfs::Install();
    fakehub::FaultRule hold = Fault(fakehub::FaultAction::kDelay, RefsPath(kRepo), 1);
    hold.delay = std::chrono::milliseconds(1500);
    hub_->AddFault(hold);
    ASSERT_NE(StartService(FastConfig({kRepo})), 0);
    const int64_t failed_before = vfs.failed_writes();
    vfs.Set(fault, dir_);
    ASSERT_TRUE(Eventually([&] { return Metric("hubwatch_polls_total", {"error"}) >= 1; }))
        << RepoState(kRepo);
    EXPECT_GT(vfs.failed_writes(), failed_before);
    EXPECT_TRUE(Healthy());
    EXPECT_TRUE(Revisions(kRepo).empty());  // nothing half-written
    vfs.Clear();
    EXPECT_TRUE(AllArrived(kRepo)) << RepoState(kRepo);
    EXPECT_EQ(ErrorChanges(kRepo), 0u);
    EXPECT_FALSE(Advisories(kRepo).empty());
    service_->Stop();
    ASSERT_EQ(Join(), 0);
    EXPECT_EQ(IntegrityCheck(dir_ + "/hubwatch.db"), "ok");
  }

  // SQLite's own check of every page and index of `db`.
  static std::string IntegrityCheck(const std::string& db) {
    sqlite3* handle = nullptr;
    std::string result = "cannot open";
    if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* q = nullptr;
      if (sqlite3_prepare_v2(handle, "PRAGMA integrity_check", -1, &q, nullptr) == SQLITE_OK &&
          sqlite3_step(q) == SQLITE_ROW) {
        result = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
      }
      sqlite3_finalize(q);
    }
    sqlite3_close(handle);
    return result;
  }
};

TEST_F(DiskFaultTest, DiskFull) { RunWith(hubwatch::testing::FaultVfs::Fault::kDiskFull); }

// A write the disk cut short leaves a torn page in the WAL: SQLite's checksums drop it.
TEST_F(DiskFaultTest, ShortWrite) { RunWith(hubwatch::testing::FaultVfs::Fault::kShortWrite); }

TEST_F(FaultMatrixTest, SlowLorisClient) {
  config::DaemonConfig config = FastConfig({kRepo});
  config.api.header_timeout_s = 1;
  config.api.read_timeout_s = 1;
  ASSERT_NE(StartService(config), 0);
  // Headers a byte at a time, and a body that never comes, on several connections.
  std::vector<std::unique_ptr<RawConnection>> headers, bodies;
  for (int i = 0; i < 8; ++i) {
    headers.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(headers.back()->Send("GET /api/v1/repos HTTP/1.1\r\nHost: x\r\n"));
    bodies.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(bodies.back()->Send(
        "POST /api/v1/plan HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"));
  }
  // Other clients are served meanwhile; the trickling one is cut off (the API's timers are real
  // time: this waits on the connection, checking, never sleeping a fixed time).
  const bool closed = hubwatch::testing::WaitUntil(
      [&] {
        EXPECT_TRUE(Healthy());
        return !headers[0]->Send("X");
      },
      std::chrono::seconds(4));
  EXPECT_TRUE(closed) << "a client trickling headers is cut off at header_timeout_s";
  for (auto& c : headers) EXPECT_TRUE(c->ClosedWithin(std::chrono::seconds(3)));
  for (auto& c : bodies) {
    const std::string answer = c->ReadToEof(std::chrono::seconds(3));
    EXPECT_NE(answer.find(" 408 "), std::string::npos) << answer;
  }
  EXPECT_GE(Metric("hubwatch_http_requests_total", {"status=\"408\""}), 8);
  EXPECT_TRUE(Healthy());
  EXPECT_TRUE(AllArrived(kRepo));  // polling went on
  EXPECT_TRUE(Eventually([&] { return Metric("hubwatch_http_connections") == 1; }))
      << "sessions left open (the gauge counts the /metrics request itself)";
}

TEST_F(FaultMatrixTest, HugeRequestBody100MB) {
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  const std::string mb(1 << 20, ' ');
  // Declared: refused from the header, before any of the body is read.
  RawConnection declared(port_);
  ASSERT_TRUE(declared.Send(
      "POST /api/v1/plan HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n{" + mb));
  const std::string answer = declared.ReadUntil(
      [](const std::string& r) { return r.find("\r\n\r\n") != std::string::npos; },
      std::chrono::seconds(3));
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 413 ")) << answer.substr(0, 200);
  // Chunked, no length: cut off at the route's limit, not buffered to 100 MB.
  RawConnection chunked(port_);
  ASSERT_TRUE(
      chunked.Send("POST /api/v1/plan HTTP/1.1\r\nHost: x\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n"));
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", mb.size());
  int sent_mb = 0;
  while (sent_mb < 100 && chunked.Send(size + mb + "\r\n")) ++sent_mb;
  EXPECT_LT(sent_mb, 100) << "the server kept reading a 100 MB body";
  EXPECT_GE(Metric("hubwatch_http_requests_total", {"status=\"413\""}), 1);
  EXPECT_TRUE(Healthy());
  EXPECT_EQ(Request(port_, "POST", "/api/v1/plan", "{}").status / 100, 4);  // still answers
  EXPECT_TRUE(AllArrived(kRepo));
}

}  // namespace
}  // namespace hubwatch::service::testing
