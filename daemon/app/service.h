#pragma once

// Service: `hubwatch serve` - the long-running daemon, assembled from the layers below it.
//
// Threads and ownership:
//   network thread   runs the one io_context: the hub client (libcurl multi on Asio), the
//                    scheduler's timers, signals, the watchdog, the HTTP API and webhook
//                    deliveries; reads the store through StoreAccess::reads()
//   store thread     owned by ThreadedStoreAccess: every database write, and the CPU-heavy part
//                    of ingesting a revision (diff engines, estimate, OSV, the commit), which
//                    the poller offloads there
// The Service owns everything; components get references and must not outlive it. It wires
// them (this file); schedule::PollLoop ticks, service::StatusReporter pings the watchdog and
// reports the status, Reloader answers SIGHUP and ConfigApplier applies a configuration (the
// start's and each reload's), LoopControl is the API's hold on the loop.
//
// Lifecycle: READY=1 once the store is open, the listener bound and the first schedule armed;
// SIGTERM/SIGINT send STOPPING=1, stop scheduling, abandon in-flight Hub calls (a revision is
// committed whole or not at all), drain the store thread and return 0 within 10 s; SIGHUP sends
// RELOADING=1 + MONOTONIC_USEC, re-reads the config and checks it as the start did
// (PrepareConfig), writes its store changes in one transaction and applies the rest (repos,
// intervals, budget, subscriptions) keeping all state - or, on any failure, nothing - then
// READY=1 again; WATCHDOG=1 at half of WATCHDOG_USEC, only while the scheduler's tick keeps
// running. STATUS= says what it is doing. Run() returns 2 when the configuration cannot be run
// (bad input), 1 for other start failures.

#include <functional>
#include <memory>
#include <string>

#include "daemon/config/config.h"
#include "estimator/base/clock.h"
#include "estimator/base/result.h"

namespace spdlog {
class logger;
}

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace hubwatch::service {
class Notifier;
}

namespace hubwatch::app {

struct ServiceOptions {
  config::DaemonConfig config;
  std::shared_ptr<spdlog::logger> logger;
  // Re-reads the configuration on SIGHUP (default: LoadConfig(config.path)).
  std::function<Result<config::DaemonConfig>()> reload;
  const Clock* clock = &SystemClock();  // never null; thread-safe
  // Makes the clock of the daemon's timers (the poll loop's tick, the listing's and the
  // derivatives' rounds, the watchdog and the status) on the service's event loop, once, at
  // construction; it must tell the time `clock` tells. Default: real time, hub::MakeAsioClock.
  std::function<std::unique_ptr<TimerClock>(boost::asio::io_context& loop)> timers = nullptr;
};

class Service {
 public:
  Service(ServiceOptions options, const service::Notifier& notifier);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Runs until stopped by a signal or Stop(). Returns the process exit code.
  int Run();
  // Asks the service to stop, from any thread.
  void Stop();
  // The API's port once bound (0 before Run binds it), for tests.
  uint16_t api_port() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hubwatch::app
