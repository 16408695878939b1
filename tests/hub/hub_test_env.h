#pragma once

// Test wiring: a fakehub on loopback (port 0), the real CurlTransport on an io_context, a
// FakeClock and a SeededRandom, and Await() to run the loop until a call's callback fires.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/fakehub/fakehub.h"
#include "tests/hub/fake_clock.h"
#include "tracker/hub/client.h"
#include "tracker/hub/curl_transport.h"

namespace hubwatch::hub {

// Runs io until the callback handed to `start` has been called (30 s real-time guard).
template <class T, class Start>
std::pair<HubResult<T>, CallStats> Await(boost::asio::io_context& io, Start&& start) {
  std::optional<HubResult<T>> result;
  CallStats stats;
  start([&](HubResult<T> r, const CallStats& s) {
    result.emplace(std::move(r));
    stats = s;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!result && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(100));
  }
  if (!result) {
    ADD_FAILURE() << "call did not complete within 30 s";
    HubError error;
    error.detail = "test timeout";
    return {HubResult<T>(error), stats};
  }
  return {std::move(*result), stats};
}

class HubTest : public ::testing::Test {
 protected:
  static std::string FixturesDir() { return std::string(HUBWATCH_FIXTURES_DIR) + "/hub"; }

  // Starts fakehub with the incident fixtures (plus `options`' extras).
  void StartHub(fakehub::FakeHubOptions options = {}, bool with_fixtures = true) {
    if (with_fixtures) options.fixtures_dir = FixturesDir();
    auto started = fakehub::FakeHub::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().message;
    hub_ = std::move(started).value();
  }

  HubClient& MakeClient(HubClientOptions options = {}) {
    if (options.settings.endpoint == "https://huggingface.co") {
      options.settings.endpoint = hub_->endpoint();
    }
    options.log = [this](std::string_view line) { log_lines_.emplace_back(line); };
    client_.reset();
    transport_ = std::make_unique<CurlTransport>(io_);
    clock_ = std::make_unique<FakeClock>(io_);
    random_ = std::make_unique<SeededRandom>(42);
    HubClientDeps deps{transport_.get(), clock_.get(), random_.get(), &cache_};
    client_ = std::make_unique<HubClient>(std::move(options), deps);
    return *client_;
  }

  HubClient& client() { return *client_; }

  // Requests fakehub saw whose path contains `needle`.
  std::vector<fakehub::LoggedRequest> Logged(const std::string& needle) const {
    std::vector<fakehub::LoggedRequest> out;
    for (const auto& r : hub_->RequestLog()) {
      if (r.path.find(needle) != std::string::npos) out.push_back(r);
    }
    return out;
  }

  void TearDown() override {
    client_.reset();
    transport_.reset();
    if (hub_) hub_->Stop();
  }

  boost::asio::io_context io_;
  std::unique_ptr<fakehub::FakeHub> hub_;
  std::unique_ptr<CurlTransport> transport_;
  std::unique_ptr<FakeClock> clock_;
  std::unique_ptr<SeededRandom> random_;
  InMemoryEtagCache cache_;
  std::unique_ptr<HubClient> client_;
  std::vector<std::string> log_lines_;
};

}  // namespace hubwatch::hub
