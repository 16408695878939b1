// The fault matrix, local side: the database locked by another process, a full disk,
// a slow-loris API client and a 100 MB request body, against the real in-process
// `hubwatch serve`. As for the Hub faults: the daemon keeps running, the fault is counted, nothing
// is lost and it recovers when the fault ends.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tests/faults/fault_env.h"

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

// The store on a small tmpfs (needs CAP_SYS_ADMIN; skipped without it), filled up with a
// filler file while the first poll's refs call is held back.
class DiskFullTest : public FaultMatrixTest {
 protected:
  void TearDown() override {
    if (thread_.joinable()) {
      service_->Stop();
      thread_.join();
    }
    if (mounted_) umount2(mount_.c_str(), MNT_DETACH);
    FaultMatrixTest::TearDown();
  }
  bool Mount() {
    mount_ = dir_ + "/fs";
    mkdir(mount_.c_str(), 0700);
    mounted_ = mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=16m") == 0;
    return mounted_;
  }
  // Writes a filler file until the file system is full; true when it is.
  bool Fill() {
    const int fd = open((mount_ + "/filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return false;
    const std::string chunk(64 << 10, 'x');
    ssize_t n = 0;
    while ((n = write(fd, chunk.data(), chunk.size())) > 0) {
    }
    const bool full = n < 0 && errno == ENOSPC;
    close(fd);
    // The last partial pages too.
    const int fd2 = open((mount_ + "/filler2").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    while (fd2 >= 0 && write(fd2, chunk.data(), 512) > 0) {
    }
    if (fd2 >= 0) close(fd2);
    return full;
  }
  std::string mount_;
  bool mounted_ = false;
};

TEST_F(DiskFullTest, DiskFull) {
  if (!Mount()) GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  fakehub::FaultRule hold = Fault(fakehub::FaultAction::kDelay, RefsPath(kRepo), 1);
  hold.delay = std::chrono::milliseconds(1500);
  hub_->AddFault(hold);
  config::DaemonConfig config = FastConfig({kRepo});
  config.store = mount_ + "/hubwatch.db";
  ASSERT_NE(StartService(config), 0);
  ASSERT_TRUE(Fill());
  // The first ingest runs out of space (SQLITE_FULL): the poll fails and is counted.
  ASSERT_TRUE(Eventually([&] { return Metric("hubwatch_polls_total", {"error"}) >= 1; }))
      << RepoState(kRepo);
  EXPECT_TRUE(Healthy());
  EXPECT_TRUE(Revisions(kRepo).empty());  // nothing half-written
  std::remove((mount_ + "/filler").c_str());
  std::remove((mount_ + "/filler2").c_str());
  EXPECT_TRUE(AllArrived(kRepo)) << RepoState(kRepo);
  EXPECT_EQ(ErrorChanges(kRepo), 0u);
  EXPECT_FALSE(Advisories(kRepo).empty());
}

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
  const auto start = std::chrono::steady_clock::now();
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() - start < std::chrono::seconds(4)) {
    EXPECT_TRUE(Healthy());  // other clients are served meanwhile
    closed = !headers[0]->Send("X");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
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
