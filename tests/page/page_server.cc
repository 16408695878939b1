// page_server: the pages over the page fixture store (page_fixture.h), for the browser tests
// (tests/browser/browser_test.sh) and the load test (tests/page/bench_page.sh). Prints
// "base URL" once listening, then serves until SIGINT or SIGTERM. Loopback only.
//
// usage: page_server [--history N] [--no-page-cache]
//   --history N      N synthetic revisions added to gemma-2-9b-it
//   --no-page-cache  render every page request (the server's rendered-page cache off)

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "daemon/api/api_server.h"
#include "daemon/service/metrics.h"
#include "daemon/service/store_access.h"
#include "tests/page/page_fixture.h"
#include "tracker/store/store.h"

int main(int argc, char** argv) {
  using namespace hubwatch;
  int history = 0;
  bool page_cache = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--history" && i + 1 < argc) {
      history = std::atoi(argv[++i]);
    } else if (arg == "--no-page-cache") {
      page_cache = false;
    } else {
      std::fprintf(stderr, "usage: page_server [--history N] [--no-page-cache]\n");
      return 2;
    }
  }
  const std::string db = "/tmp/hubwatch_page_server_" + std::to_string(::getpid()) + ".db";
  Status built = page::testing::BuildPageDb(db);
  if (built.ok() && history > 0) {
    built = page::testing::AddSyntheticHistory(db, page::testing::kGemma, history);
  }
  if (!built.ok()) {
    std::fprintf(stderr, "page_server: %s\n", built.error().message.c_str());
    return 1;
  }
  auto store = store::Store::Open(db);
  if (!store.ok()) return 1;
  boost::asio::io_context io;
  service::InlineStoreAccess access(**store);
  service::Metrics metrics;
  config::ApiConfig config;
  config.listen = "127.0.0.1:0";
  config.max_connections = 1024;
  api::ApiDeps deps;
  deps.io = &io;
  deps.store = &access;
  deps.metrics = &metrics;
  if (!page_cache) deps.tuning.page_cache_entries = 0;
  deps.open_reader = [db] { return store::Store::Open(db); };  // the read pool, as `serve` has
  auto server = api::ApiServer::Start(config, std::move(deps));
  if (!server.ok()) {
    std::fprintf(stderr, "page_server: %s\n", server.error().message.c_str());
    return 1;
  }
  std::printf("base http://127.0.0.1:%u\n", static_cast<unsigned>((*server)->port()));
  std::fflush(stdout);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { (*server)->Stop(); });
  io.run();
  server->reset();
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  return 0;
}
