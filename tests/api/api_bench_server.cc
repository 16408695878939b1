// api_bench_server: the HTTP API over the fixture store (api_fixture.h), for load tests with
// wrk (tests/api/bench_api.sh). Prints "port N" and two URLs to load, then serves until
// SIGINT or SIGTERM. Loopback only.
//
// usage: api_bench_server [PORT]   (0 or absent: any free port)

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "daemon/api/api_server.h"
#include "daemon/service/metrics.h"
#include "daemon/service/store_access.h"
#include "tests/api/api_fixture.h"
#include "tracker/store/store.h"

int main(int argc, char** argv) {
  using namespace hubwatch;
  const std::string db = "/tmp/hubwatch_api_bench_" + std::to_string(::getpid()) + ".db";
  if (Status s = api::testing::BuildFixtureDb(db); !s.ok()) {
    std::fprintf(stderr, "api_bench_server: %s\n", s.error().message.c_str());
    return 1;
  }
  auto store = store::Store::Open(db);
  if (!store.ok()) {
    std::fprintf(stderr, "api_bench_server: %s\n", store.error().message.c_str());
    return 1;
  }
  auto revisions = (*store)->revisions().ListRevisions(api::testing::kMistral);
  if (!revisions.ok() || revisions->size() < 4) return 1;
  boost::asio::io_context io;
  service::InlineStoreAccess access(**store);
  service::Metrics metrics;
  config::ApiConfig config;
  config.listen = "127.0.0.1:" + std::string(argc > 1 ? argv[1] : "0");
  config.max_connections = 1024;
  api::ApiDeps deps;
  deps.io = &io;
  deps.store = &access;
  deps.metrics = &metrics;
  auto server = api::ApiServer::Start(config, std::move(deps));
  if (!server.ok()) {
    std::fprintf(stderr, "api_bench_server: %s\n", server.error().message.c_str());
    return 1;
  }
  const std::string base = "http://127.0.0.1:" + std::to_string((*server)->port());
  std::printf("port %u\n", static_cast<unsigned>((*server)->port()));
  std::printf("badge %s/api/v1/repos/%s/badge?pin=%s\n", base.c_str(), api::testing::kMistral,
              (*revisions)[3].sha.substr(0, 7).c_str());
  std::printf("revisions %s/api/v1/repos/%s/revisions?limit=20\n", base.c_str(),
              api::testing::kMistral);
  std::fflush(stdout);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { (*server)->Stop(); });
  io.run();
  server->reset();
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  return 0;
}
