#pragma once

// ApiServer: hubwatch's HTTP API (issue 5) on Boost.Beast, on the service's io_context.
//
//   listener  accepts on ApiConfig::listen ("127.0.0.1:8437"; port 0 picks one), at most
//             max_connections sessions at once (the next gets 503 and is closed)
//   session   one per connection: HTTP/1.1 keep-alive, a header timeout (header_timeout_s,
//             also the idle time between requests), a read/write timeout (read_timeout_s),
//             request headers up to 16 KiB (431 beyond), bodies up to max_body_bytes
//             (plan: max_plan_body_bytes; 413 beyond); malformed HTTP -> 400 and close
//   router    the endpoints (daemon/api/routes_*.cc); every error is {"error": "..."}
//   streams   GET /api/v1/stream turns a session into a Server-Sent Events stream of
//             advisories; OnNewAdvisories() wakes every stream to send what is new
//
// Reads use StoreAccess::reads() on the network thread; admin writes go through
// StoreAccess::Write and reply when the store thread is done.
//
// Thread safety: everything runs on the io_context's thread (the network thread). Start() may
// be called before that thread runs the loop; Stop(), OnNewAdvisories() and the destructor
// must be called on it (or while the loop is not running). Ownership: the server borrows every
// pointer in ApiDeps; they must outlive it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/config.h"
#include "estimator/result.h"

namespace boost::asio {
class io_context;
}

namespace hubwatch::service {
class Metrics;
class ServiceControl;
class StoreAccess;
}  // namespace hubwatch::service

namespace hubwatch::api {

class SubscriptionsHandler;

// Knobs tests turn; the defaults are the service's.
struct ApiTuning {
  std::chrono::milliseconds sse_heartbeat{15000};  // a ": keep-alive" comment this often
  int64_t sse_retry_ms = 5000;                     // the stream's "retry:" for reconnects
  int64_t osv_page_size = 1000;                    // vulns per /v1/query page (osv.dev: 1000)
};

struct ApiDeps {
  boost::asio::io_context* io = nullptr;           // REQUIRED
  service::StoreAccess* store = nullptr;           // REQUIRED
  service::Metrics* metrics = nullptr;             // REQUIRED
  service::ServiceControl* control = nullptr;      // null: /readyz is ready, no callbacks
  SubscriptionsHandler* subscriptions = nullptr;   // null: subscriptions answer 503
  std::optional<std::string> admin_token;          // unset: admin endpoints answer 403
  std::string hub_url = "https://huggingface.co";  // links in feeds and badges
  std::function<int64_t()> now;                    // Unix seconds; unset: system clock
  ApiTuning tuning{};
};

class ApiServer {
 public:
  // Binds and starts accepting. Errors: a listen address that does not parse, or bind/listen
  // failing (address in use, permission).
  static Result<std::unique_ptr<ApiServer>> Start(const cli::ApiConfig& config, ApiDeps deps);
  ~ApiServer();  // Stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // The bound port (useful with port 0).
  uint16_t port() const;
  // Closes the listener and every session and stream; in-flight admin writes still complete in
  // the store but their replies are dropped. Idempotent.
  void Stop();
  // New advisories are committed: every SSE stream sends those after its last id.
  void OnNewAdvisories();

 private:
  class Impl;
  explicit ApiServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace hubwatch::api
