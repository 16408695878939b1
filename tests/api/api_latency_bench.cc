// api_latency_bench: does heavy work starve light requests? The HTTP API over the fixture store
// (api_fixture.h) on 127.0.0.1, with LOADERS client threads each looping POST /v1/querybatch of
// 1,000 queries (commit and purl queries over the fixture's revisions, as osv-scanner sends
// them) while one prober sends GET /healthz every 20 ms on a fresh connection and times it.
// Prints the probe latencies (median, p99, max), the heavy requests' rate and median, and every
// non-200. Loopback only; not a test (BENCHMARKS.md has the method and the results).
//
// usage: api_latency_bench [SECONDS] [LOADERS] [pool|no-pool]   (defaults: 10, 4, pool)
// no-pool runs every route on the network thread, as the server did before the read pool.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "daemon/api/api_server.h"
#include "daemon/service/metrics.h"
#include "daemon/service/store_access.h"
#include "tests/api/api_fixture.h"
#include "tests/api/http_client.h"
#include "tracker/store/store.h"

namespace {

using namespace hubwatch;
using SteadyClock = std::chrono::steady_clock;

struct Samples {
  std::mutex mu;
  std::vector<double> ms;
  int failures = 0;

  void Add(double v, bool ok) {
    std::lock_guard lock(mu);
    ms.push_back(v);
    failures += ok ? 0 : 1;
  }
  // The q-quantile (nearest rank) of what was added.
  double Quantile(double q) {
    std::lock_guard lock(mu);
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    const size_t rank = static_cast<size_t>(q * static_cast<double>(ms.size() - 1) + 0.5);
    return ms[std::min(rank, ms.size() - 1)];
  }
};

double MsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

// 1,000 queries over every revision of the fixture repos, alternating commit and purl forms.
std::string BatchBody(store::Store& store) {
  nlohmann::json queries = nlohmann::json::array();
  std::vector<std::pair<std::string, std::string>> revisions;
  for (const char* repo : {api::testing::kLlama, api::testing::kMistral}) {
    auto revs = store.revisions().ListRevisions(repo);
    if (!revs.ok()) continue;
    for (const store::RevisionRecord& r : *revs) revisions.emplace_back(repo, r.sha);
  }
  for (size_t i = 0; i < 1000 && !revisions.empty(); ++i) {
    const auto& [repo, sha] = revisions[i % revisions.size()];
    if (i % 2 == 0) {
      queries.push_back({{"commit", sha}});
    } else {
      queries.push_back({{"package", {{"purl", "pkg:huggingface/" + repo + "@" + sha}}}});
    }
  }
  return nlohmann::json{{"queries", queries}}.dump();
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 10;
  const int loaders = argc > 2 ? std::atoi(argv[2]) : 4;
  const bool pool = argc <= 3 || std::string(argv[3]) != "no-pool";
  const std::string db = "/tmp/hubwatch_api_latency_" + std::to_string(::getpid()) + ".db";
  if (Status s = api::testing::BuildFixtureDb(db); !s.ok()) {
    std::fprintf(stderr, "api_latency_bench: %s\n", s.error().message.c_str());
    return 1;
  }
  auto store = store::Store::Open(db);
  if (!store.ok()) {
    std::fprintf(stderr, "api_latency_bench: %s\n", store.error().message.c_str());
    return 1;
  }
  const std::string body = BatchBody(**store);
  boost::asio::io_context io;
  service::InlineStoreAccess access(**store);
  service::Metrics metrics;
  config::ApiConfig config;
  config.listen = "127.0.0.1:0";
  api::ApiDeps deps;
  deps.io = &io;
  deps.store = &access;
  deps.metrics = &metrics;
  if (pool) deps.open_reader = [db] { return store::Store::Open(db); };
  auto server = api::ApiServer::Start(config, std::move(deps));
  if (!server.ok()) {
    std::fprintf(stderr, "api_latency_bench: %s\n", server.error().message.c_str());
    return 1;
  }
  const uint16_t port = (*server)->port();
  auto work = boost::asio::make_work_guard(io);
  std::thread network([&] { io.run(); });

  std::atomic<bool> done{false};
  Samples heavy, probe;
  std::vector<std::thread> threads;
  for (int i = 0; i < loaders; ++i) {
    threads.emplace_back([&] {
      while (!done) {
        const auto t0 = SteadyClock::now();
        const int status = api::testing::Request(port, "POST", "/v1/querybatch", body).status;
        heavy.Add(MsSince(t0), status == 200);
      }
    });
  }
  threads.emplace_back([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the load is on
    while (!done) {
      const auto t0 = SteadyClock::now();
      const int status = api::testing::Request(port, "GET", "/healthz").status;
      probe.Add(MsSince(t0), status == 200);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  done = true;
  for (std::thread& t : threads) t.join();

  std::printf(
      "%s: querybatch(1000) x %d loaders: %zu requests, %.1f req/s, median %.1f ms, %d failed\n",
      pool ? "read pool" : "no pool", loaders, heavy.ms.size(),
      static_cast<double>(heavy.ms.size()) / seconds, heavy.Quantile(0.5), heavy.failures);
  std::printf("/healthz: %zu probes, median %.2f ms, p99 %.2f ms, max %.2f ms, %d failed\n",
              probe.ms.size(), probe.Quantile(0.5), probe.Quantile(0.99), probe.Quantile(1.0),
              probe.failures);
  boost::asio::post(io, [&] { (*server)->Stop(); });
  work.reset();
  network.join();
  server->reset();
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  return 0;
}
