#include "tests/api/api_fixture.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "tests/fakehub/fakehub.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/store.h"

namespace hubwatch::api::testing {

Status PollFixtureRepos(const std::string& fixtures_dir, store::Store& store,
                        const std::vector<std::string>& repos) {
  constexpr const char kToken[] = "hf_api_test_token";
  fakehub::FakeHubOptions options;
  options.fixtures_dir = fixtures_dir;
  options.users = {{kToken, "hubwatch-tests", true}};
  auto hub = fakehub::FakeHub::Start(std::move(options));
  if (!hub.ok()) return hub.error();
  boost::asio::io_context io;
  hub::HubClientOptions client;
  client.settings.endpoint = (*hub)->endpoint();
  client.settings.token = hub::Secret(kToken);
  client.retry.base = std::chrono::milliseconds(1);
  client.retry.cap = std::chrono::milliseconds(2);
  hub::HubStack stack(io, client);
  for (const std::string& repo : repos) {
    if (Status s = store.repos().AddRepo({.id = repo, .refs = {"main"}, .added_at = kIngestNow});
        !s.ok()) {
      return s;
    }
    const ManualClock ingest_clock(kIngestNow);
    pipeline::PollerOptions poll;
    poll.clock = &ingest_clock;
    poll.hub_info_interval_s = 86400;  // the pages show downloads, likes and tags
    pipeline::Poller poller(stack.client(), store, poll);
    std::optional<pipeline::PollReport> report;
    poller.Poll(repo, [&](pipeline::PollReport r) { report = std::move(r); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!report && std::chrono::steady_clock::now() < deadline) {
      io.restart();
      io.run_one_for(std::chrono::milliseconds(100));
    }
    if (!report) return Error::Io("polling " + repo + " did not finish");
    if (!report->ok) return Error::Io("polling " + repo + ": " + report->error);
  }
  return Status::Ok();
}

Status BuildFixtureDb(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  auto opened = store::Store::Open(path);
  if (!opened.ok()) return opened.error();
  return PollFixtureRepos(std::string(HUBWATCH_FIXTURES_DIR) + "/hub", **opened,
                          {kLlama, kMistral});
}

const std::string& FixtureDb() {
  static const std::string path = [] {
    const char* env = std::getenv("HUBWATCH_API_FIXTURE_DB");
    if (env && std::filesystem::exists(env)) return std::string(env);
    const std::string built = std::filesystem::temp_directory_path().string() +
                              "/hubwatch_api_fixture_" + std::to_string(::getpid()) + ".db";
    Status s = BuildFixtureDb(built);
    if (!s.ok()) {
      std::fprintf(stderr, "building the API fixture database: %s\n", s.error().message.c_str());
      std::abort();
    }
    std::atexit([] {
      const std::string p = std::filesystem::temp_directory_path().string() +
                            "/hubwatch_api_fixture_" + std::to_string(::getpid()) + ".db";
      for (const char* suffix : {"", "-wal", "-shm"}) std::remove((p + suffix).c_str());
    });
    return built;
  }();
  return path;
}

Status CopyDb(const std::string& from, const std::string& to) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(to + suffix, ec);
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return Error::Io("copying " + from + ": " + ec.message());
  return Status::Ok();
}

}  // namespace hubwatch::api::testing
