// hub_bench_resolve: HEAD-resolve throughput and CPU per request at N concurrent transfers, and
// memory per idle connection, for the Hub client (CurlTransport on Asio) against fakehub.
//
// Method. The fakehub executable runs as a child process (loopback, port 0, synthetic repos), so
// getrusage(RUSAGE_SELF) and /proc/self/statm measure the client alone.
//  1. Throughput: `--requests` ResolveHead calls of an LFS file (one 302 each, no CDN hop), kept
//     `--concurrency` in flight, after a warm-up of one round. Reports calls/s over wall time and
//     client CPU (user+sys) per call.
//  2. Idle connections: a fresh transport starts `--idle` HEADs at once (each opens its own
//     HTTP/1.1 connection; no easy-handle pool), they finish, and the connections sit idle in
//     curl's cache. RSS after
//     minus RSS before (both after malloc_trim), divided by the number of idle sockets counted in
//     /proc/self/fd, is the memory per idle connection.
// --tls (--tls-h1): the client talks to an nghttpx front (tls_front.h) before fakehub: TLS with
// ALPN h2,http/1.1 (http/1.1 only), certificates of a test CA trusted through ca_file, the wire
// production uses. The front's CPU is reported apart; the client's includes TLS.
// usage: hub_bench_resolve [--requests N] [--concurrency C] [--idle K] [--fakehub PATH]
//                          [--tls | --tls-h1]

#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "tests/hub/tls_front.h"
#include "tracker/hub/asio_clock.h"
#include "tracker/hub/client.h"
#include "tracker/hub/curl_transport.h"

extern char** environ;

namespace {

using namespace hubwatch::hub;

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

long RssBytes() {
  malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

int SocketCount() {
  int sockets = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (!ec && target.string().starts_with("socket:")) ++sockets;
  }
  return sockets;
}

struct Child {
  pid_t pid = 0;
  std::string url;
};

Child StartFakehub(const std::string& binary, int repos, std::vector<std::string> extra) {
  int out[2];
  if (pipe(out) != 0) std::exit(1);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args = {binary,        "--synthetic", std::to_string(repos),
                                   "--api-quota", "1000000000",  "--resolvers-quota",
                                   "1000000000"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Child child;
  if (posix_spawn(&child.pid, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
    std::cerr << "cannot start " << binary << "\n";
    std::exit(1);
  }
  close(out[1]);
  std::string line;
  char c = 0;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  const size_t at = line.find("http://");
  if (at == std::string::npos) {
    std::cerr << "fakehub did not start: " << line << "\n";
    std::exit(1);
  }
  child.url = line.substr(at);
  return child;
}

double ChildCpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string field;
  std::vector<std::string> fields;
  while (stat >> field) fields.push_back(field);
  if (fields.size() < 15) return 0;
  return (std::stod(fields[13]) + std::stod(fields[14])) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Keeps `concurrency` ResolveHead calls in flight until `total` completed.
int RunResolves(boost::asio::io_context& io, HubClient& client, int total, int concurrency,
                int repos) {
  int started = 0, completed = 0, failures = 0;
  std::function<void()> start_one = [&] {
    const int i = started++;
    char repo[64];
    std::snprintf(repo, sizeof repo, "synthetic/model-%05d", i % repos);
    client.ResolveHead(repo, "main", "model.safetensors",
                       [&](HubResult<ResolvedFile> r, const CallStats&) {
                         ++completed;
                         if (!r.ok() || !r->is_lfs) ++failures;
                         if (started < total) start_one();
                       });
  };
  for (int i = 0; i < concurrency && started < total; ++i) start_one();
  while (completed < total) {
    io.restart();
    io.run_one();
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 20000, concurrency = 64, idle = 256, repos = 64;
  std::string binary = FAKEHUB_BINARY;
  std::string tls;  // "", "h2,http/1.1" or "http/1.1"
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tls" || arg == "--tls-h1") {
      tls = arg == "--tls" ? "h2,http/1.1" : "http/1.1";
      continue;
    }
    if (i + 1 >= argc) break;
    if (arg == "--requests")
      requests = std::stoi(argv[i + 1]);
    else if (arg == "--concurrency")
      concurrency = std::stoi(argv[i + 1]);
    else if (arg == "--idle")
      idle = std::stoi(argv[i + 1]);
    else if (arg == "--fakehub")
      binary = argv[i + 1];
    ++i;
  }
  signal(SIGPIPE, SIG_IGN);
  using hubwatch::tls_test::TlsFront;
  std::unique_ptr<TlsFront> front;
  std::string ca_file;
  Child hub;
  if (tls.empty()) {
    hub = StartFakehub(binary, repos, {});
  } else {
    auto pki = hubwatch::tls_test::SharedTestPki();
    if (!pki.ok()) return std::fprintf(stderr, "%s\n", pki.error().message.c_str()), 1;
    const uint16_t port = hubwatch::tls_test::FreePort("127.0.0.1");
    const std::string public_url = "https://127.0.0.1:" + std::to_string(port);
    const std::string cdn_url =  // never contacted: HEADs do not follow the CDN redirect
        "https://127.0.0.2:" + std::to_string(hubwatch::tls_test::FreePort("127.0.0.2"));
    hub =
        StartFakehub(binary, repos, {"--public-hub-url", public_url, "--public-cdn-url", cdn_url});
    auto started = TlsFront::Start(
        {.port = port,
         .backend_port = static_cast<uint16_t>(std::stoi(hub.url.substr(hub.url.rfind(':') + 1))),
         .cert = pki->loopback_cert,
         .key = pki->loopback_key,
         .alpn = tls},
        pki->dir);
    if (!started.ok()) return std::fprintf(stderr, "%s\n", started.error().message.c_str()), 1;
    front = std::move(started).value();
    hub.url = front->url();
    ca_file = pki->ca;
    std::printf("wire: TLS through nghttpx, ALPN %s\n", tls.c_str());
  }
  int status = 0;
  {
    boost::asio::io_context io;
    CurlTransportOptions transport_options;
    transport_options.max_concurrent_transfers = static_cast<size_t>(concurrency);
    transport_options.max_host_connections = concurrency;
    transport_options.max_total_connections = concurrency;
    transport_options.connection_cache_size = concurrency;
    transport_options.ca_file = ca_file;
    CurlTransport transport(io, transport_options);
    auto clock = MakeAsioClock(io);
    hubwatch::SeededRandom random(1);
    HubClientOptions options;
    options.settings.endpoint = hub.url;
    HubClient client(options, {&transport, clock.get(), &random, nullptr});

    RunResolves(io, client, concurrency * 4, concurrency, repos);  // warm-up: connect everything
    const double cpu0 = CpuSeconds(), hub_cpu0 = ChildCpuSeconds(hub.pid);
    const double front_cpu0 = front ? ChildCpuSeconds(front->pid()) : 0;
    const auto t0 = std::chrono::steady_clock::now();
    const int failures = RunResolves(io, client, requests, concurrency, repos);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = CpuSeconds() - cpu0, hub_cpu = ChildCpuSeconds(hub.pid) - hub_cpu0;
    std::printf("resolve_head: %d calls, concurrency %d, %d failures\n", requests, concurrency,
                failures);
    std::printf("  throughput      %.0f calls/s (wall %.3f s)\n", requests / wall, wall);
    std::printf("  client CPU      %.1f us/call (%.3f s user+sys)\n", cpu / requests * 1e6, cpu);
    std::printf("  fakehub CPU     %.1f us/call\n", hub_cpu / requests * 1e6);
    if (front) {
      std::printf("  front CPU       %.1f us/call (nghttpx)\n",
                  (ChildCpuSeconds(front->pid()) - front_cpu0) / requests * 1e6);
      std::printf("  connections     %zu to the front (access log)\n", front->Connections());
    }
    std::printf("  requests        %s\n", client.accounting().Summary().c_str());
    status = failures == 0 ? 0 : 1;
  }
  {
    boost::asio::io_context io;
    CurlTransportOptions transport_options;
    transport_options.max_concurrent_transfers = static_cast<size_t>(idle);
    transport_options.max_host_connections = idle;
    transport_options.max_total_connections = idle;
    transport_options.connection_cache_size = idle;
    transport_options.easy_handle_pool = 0;  // measure connections, not pooled easy handles
    transport_options.ca_file = ca_file;
    auto transport = std::make_unique<CurlTransport>(io, transport_options);
    auto clock = MakeAsioClock(io);
    hubwatch::SeededRandom random(1);
    HubClientOptions options;
    options.settings.endpoint = hub.url;
    HubClient client(options, {transport.get(), clock.get(), &random, nullptr});
    const int sockets_before = SocketCount();
    const long rss_before = RssBytes();
    RunResolves(io, client, idle, idle, repos);
    const long rss_after = RssBytes();
    const int idle_connections = SocketCount() - sockets_before;
    std::printf("idle connections: %d open after %d simultaneous calls\n", idle_connections, idle);
    if (idle_connections > 0) {
      std::printf("  memory          %.1f KiB per idle connection (RSS +%.1f KiB)\n",
                  static_cast<double>(rss_after - rss_before) / 1024.0 / idle_connections,
                  static_cast<double>(rss_after - rss_before) / 1024.0);
    }
  }
  front.reset();
  kill(hub.pid, SIGTERM);
  waitpid(hub.pid, nullptr, 0);
  return status;
}
