// hubwatch serve in-process against fakehub: the systemd notify protocol on a test socket,
// stopping, reloading, and a stop in the middle of ingestion.

#include "service/service.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <thread>

#include "service/log.h"
#include "service/notify.h"
#include "tests/fakehub/fakehub.h"
#include "tracker/store/store.h"

namespace hubwatch::service {
namespace {

constexpr const char kToken[] = "hf_service_test";

// A notify socket: the datagrams the service sends, as systemd would read them.
class NotifySocket {
 public:
  NotifySocket() {
    path_ = ::testing::TempDir() + "hubwatch_notify_" + std::to_string(getpid()) + ".sock";
    std::remove(path_.c_str());
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{0, 200'000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~NotifySocket() {
    close(fd_);
    std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }

  // Waits up to `seconds` for a datagram containing `needle`; every datagram seen is kept.
  bool WaitFor(const std::string& needle, int seconds = 20) {
    for (const std::string& m : seen_) {
      if (m.find(needle) != std::string::npos && !consumed(m)) return Consume(m);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      seen_.emplace_back(buf, static_cast<size_t>(n));
      if (seen_.back().find(needle) != std::string::npos) return Consume(seen_.back());
    }
    return false;
  }

 private:
  bool consumed(const std::string& m) const {
    for (const std::string& c : consumed_) {
      if (&c == &m) return true;
    }
    return false;
  }
  bool Consume(const std::string& m) {
    consumed_.push_back(m);
    seen_.erase(std::find(seen_.begin(), seen_.end(), m));
    return true;
  }
  std::string path_;
  int fd_ = -1;
  std::vector<std::string> seen_, consumed_;
};

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakehub::FakeHubOptions options;
    options.fixtures_dir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
    options.users = {{kToken, "service-tests", true}};
    auto hub = fakehub::FakeHub::Start(std::move(options));
    ASSERT_TRUE(hub.ok()) << hub.error().message;
    hub_ = std::move(hub).value();
    dir_ = ::testing::TempDir() + "hubwatch_service_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::system(("rm -rf '" + dir_ + "' && mkdir -p '" + dir_ + "'").c_str());
    std::FILE* f = std::fopen((dir_ + "/token").c_str(), "w");
    std::fputs(kToken, f);
    std::fclose(f);
  }
  void TearDown() override {
    if (thread_.joinable()) thread_.join();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  cli::DaemonConfig Config(std::vector<std::string> repos) {
    cli::DaemonConfig c;
    c.path = dir_ + "/hubwatch.json";
    c.store = dir_ + "/hubwatch.db";
    c.hub.endpoint = hub_->endpoint();
    c.hub.token_file = dir_ + "/token";
    for (const std::string& r : repos) c.repos.push_back({r, {"main"}});
    c.poll.interval_s = 3600;
    c.log.level = "warn";
    return c;
  }

  void Start(cli::DaemonConfig config, std::optional<std::chrono::microseconds> watchdog = {},
             std::function<Result<cli::DaemonConfig>()> reload = nullptr) {
    notifier_ = Notifier(notify_.path(), watchdog);
    auto logger = MakeLogger(LogFormat::kText, config.log.level);
    service_ =
        std::make_unique<Service>(ServiceOptions{std::move(config), *logger, reload}, notifier_);
    thread_ = std::thread([this] { exit_code_ = service_->Run(); });
  }

  int Join() {
    thread_.join();
    return exit_code_;
  }

  std::unique_ptr<store::Store> OpenStore() {
    auto s = store::Store::Open(dir_ + "/hubwatch.db");
    EXPECT_TRUE(s.ok());
    return s.ok() ? std::move(s).value() : nullptr;
  }

  std::unique_ptr<fakehub::FakeHub> hub_;
  std::string dir_;
  NotifySocket notify_;
  Notifier notifier_;
  std::unique_ptr<Service> service_;
  std::thread thread_;
  int exit_code_ = -1;
};

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
