#pragma once

// The fixture of the `hubwatch serve` tests: fakehub with the incident fixtures on loopback, a
// Service on a thread of its own with a scratch directory (store, token), and a notify socket
// that reads what the service tells systemd. With manual_time_ set, the service's time is the
// fixture's: it starts at the real time and moves only when the test calls AdvanceTime, which
// runs the daemon's timers due on the way (its tick, listing and derivative rounds, watchdog,
// status). The Hub client's own waits (retries, rate limits) and fakehub stay on real time.

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <thread>

#include "daemon/app/service.h"
#include "daemon/service/log.h"
#include "daemon/service/notify.h"
#include "estimator/base/clock.h"
#include "tests/api/http_client.h"
#include "tests/daemon/wait_until.h"
#include "tests/fakehub/fakehub.h"
#include "tests/hub/manual_timer_clock.h"
#include "tracker/store/store.h"

namespace hubwatch::service::testing {

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

// A log sink that keeps every message, for tests that check what the service said.
class CapturedLog : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  // The lines holding `needle`.
  std::vector<std::string> Matching(const std::string& needle) {
    std::vector<std::string> out;
    for (const std::string& l : lines()) {
      if (l.find(needle) != std::string::npos) out.push_back(l);
    }
    return out;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines_.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
};

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakehub::FakeHubOptions options;
    options.fixtures_dir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
    options.fixtures_dirs = fixtures_dirs_;
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
  // Writes `text` to dir_/name and returns the path.
  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return path;
  }

  void TearDown() override {
    if (thread_.joinable()) {
      service_->Stop();  // a test that failed half-way must not leave the service running
      thread_.join();
    }
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  config::DaemonConfig Config(std::vector<std::string> repos) {
    config::DaemonConfig c;
    c.path = dir_ + "/hubwatch.json";
    c.store = dir_ + "/hubwatch.db";
    c.hub.endpoint = hub_->endpoint();
    c.hub.token_file = dir_ + "/token";
    for (const std::string& r : repos)
      c.repos.push_back({.id = r, .refs = {"main"}, .derivatives = {}});
    c.poll.interval_s = 3600;
    c.poll.settle_window_s = 0;
    c.api.listen = "127.0.0.1:0";
    c.log.level = "warn";
    return c;
  }

  void Start(config::DaemonConfig config, std::optional<std::chrono::microseconds> watchdog = {},
             std::function<Result<config::DaemonConfig>()> reload = nullptr) {
    notifier_ = Notifier(notify_.path(), watchdog);
    std::shared_ptr<spdlog::logger> logger;
    if (captured_log_) {
      logger = std::make_shared<spdlog::logger>("service-test", captured_log_);
      logger->set_level(spdlog::level::info);
    } else {
      logger = *MakeLogger(LogFormat::kText, config.log.level);
    }
    app::ServiceOptions options{std::move(config), logger, reload};
    if (manual_time_) {
      options.clock = &time_;
      options.timers = [this](boost::asio::io_context& loop) {
        auto timers = std::make_unique<hubwatch::testing::ManualTimerClock>(loop, time_);
        timers_ = timers.get();
        return timers;
      };
    }
    service_ = std::make_unique<app::Service>(std::move(options), notifier_);
    thread_ = std::thread([this] { exit_code_ = service_->Run(); });
  }

  // Moves the service's time forward by `by`, running each of its timers due on the way on the
  // service's loop (their work, such as a poll, goes on after). REQUIRES: manual_time_, Start()
  // and the service still running.
  void AdvanceTime(std::chrono::milliseconds by) {
    ASSERT_NE(timers_, nullptr) << "set manual_time_ before Start()";
    ASSERT_TRUE(timers_->Advance(by)) << "the service's loop did not run a timer";
  }

  // Moves the service's time a second at a time until `done` holds, waiting up to a second of
  // real time after each step for the work it started (work that ends later is seen by a later
  // check), then, after `max_steps`, for the work alone. For an outcome that does not depend on
  // how many steps it takes.
  bool AdvanceUntil(const std::function<bool()>& done, int max_steps = 60) {
    for (int i = 0; i < max_steps; ++i) {
      if (done()) return true;
      AdvanceTime(std::chrono::seconds(1));
      if (::testing::Test::HasFatalFailure()) return false;
      if (hubwatch::testing::WaitUntil(done, std::chrono::seconds(1))) return true;
    }
    return hubwatch::testing::WaitUntil(done);
  }

  // The value of `series` ("name{label=\"value\"}", exactly as /metrics writes it) on the
  // running service's /metrics; 0 when absent.
  double ServiceMetric(const std::string& series) {
    const std::string body = api::testing::Request(service_->api_port(), "GET", "/metrics").body;
    const std::string line = "\n" + series + " ";
    const size_t at = body.find(line);
    return at == std::string::npos ? 0 : std::stod(body.substr(at + line.size()));
  }

  // The polls running now, as /readyz's status line says ("...; 1 polling; ...").
  int PollsRunning() {
    const std::string body = api::testing::Request(service_->api_port(), "GET", "/readyz").body;
    const size_t at = body.find(" polling;");
    if (at == std::string::npos) return -1;
    const size_t from = body.rfind(' ', at - 1) + 1;
    return std::stoi(body.substr(from, at - from));
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
  std::vector<std::string> fixtures_dirs_;  // more fixture directories (set before SetUp)
  // Set before Start() to keep what the service logs (at info and above).
  std::shared_ptr<CapturedLog> captured_log_;
  std::string dir_;
  // Set before Start(): the service's time moves only with AdvanceTime. Default: real time.
  bool manual_time_ = false;
  ManualClock time_{SystemClock().UnixSeconds()};          // the service's time with manual_time_
  hubwatch::testing::ManualTimerClock* timers_ = nullptr;  // the service's timers, once started
  NotifySocket notify_;
  Notifier notifier_;
  std::unique_ptr<app::Service> service_;
  std::thread thread_;
  int exit_code_ = -1;
};

}  // namespace hubwatch::service::testing
