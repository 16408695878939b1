#pragma once

// ApiServer: hubwatch's HTTP API on Boost.Beast, on the service's io_context.
//
//   listener  accepts on ApiConfig::listen ("127.0.0.1:8437"; port 0 picks one) and gives each
//             connection a slot (below), or one 503 and close when none is free (api_server.cc)
//   session   one per connection: HTTP/1.1 keep-alive, a header timeout (header_timeout_s,
//             also the idle time between requests), a read/write timeout (read_timeout_s),
//             request headers up to 16 KiB (431 beyond), bodies up to max_body_bytes
//             (plan: max_plan_body_bytes; 413 beyond); malformed HTTP, a bad chunk -> 400 and
//             close; HEAD is GET without the body (http_session.h)
//   router    the endpoints (daemon/api/routes_*.cc); every error is {"error": "..."}
//   streams   GET /api/v1/stream: the session hands its socket to an SseStream (sse_stream.h);
//             OnNewAdvisories() wakes every stream to send what is new
//
// Connection slots (server_core.h), so that no kind of client can take every one:
//   general   max_connections sessions, any route; event streams hold general slots, at most
//             max_connections / 2 of them (at least 1): a stream over that gets 503 saying so
//   probes    kProbeSlots (8) more, used only when the general slots are full: one request
//             each, a 2 s header timeout, only GET/HEAD /healthz and /readyz (else 503), so
//             the probes answer under any number of streams or idle keep-alive clients
//   beyond    one 503 and close, without reading the request
//
// Heavy read-only routes (osv queries and batches, advisory lists and the feed, changes,
// estimates, plans) run on a small read pool (read_pool.h) with read connections of its own,
// when ApiDeps::open_reader is set, so they never delay /healthz or the light routes on the
// network thread. Replies are capped at kMaxReplyBytes (8 MiB; estimates and plans at 1 MiB),
// and a connection holds at most one reply, dropped after read_timeout_s of a stalled write:
// unread replies hold at most (max_connections + 8) x 8 MiB.
//
// Other reads use StoreAccess::reads() on the network thread; admin writes go through
// StoreAccess::Write and reply when the store thread is done.
//
// Thread safety: everything runs on the io_context's thread (the network thread), but for the
// heavy handlers on the read pool. Start() may be called before that thread runs the loop;
// Stop(), OnNewAdvisories() and the destructor must be called on it (or while the loop is not
// running). Ownership: the server borrows every pointer in ApiDeps; they must outlive it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/config/config.h"
#include "estimator/base/clock.h"
#include "estimator/base/result.h"

namespace boost::asio {
class io_context;
}

namespace hubwatch::store {
class Store;
}

namespace hubwatch::service {
class Metrics;
class StoreAccess;
}  // namespace hubwatch::service

namespace hubwatch::api {

class ServiceControl;

class SubscriptionsHandler;

// Knobs tests turn; the defaults are the service's.
struct ApiTuning {
  std::chrono::milliseconds sse_heartbeat{15000};  // a ": keep-alive" comment this often
  int64_t sse_retry_ms = 5000;                     // the stream's "retry:" for reconnects
  int64_t osv_page_size = 1000;                    // vulns per /v1/query page (osv.dev: 1000)
  size_t osv_page_bytes = 4u << 20;                // a page of whole records ends early past this
  size_t page_cache_entries = 32;  // rendered model pages kept (0: render every request)
};

struct ApiDeps {
  boost::asio::io_context* io = nullptr;           // REQUIRED
  service::StoreAccess* store = nullptr;           // REQUIRED
  service::Metrics* metrics = nullptr;             // REQUIRED
  ServiceControl* control = nullptr;               // null: /readyz is ready, no callbacks
  SubscriptionsHandler* subscriptions = nullptr;   // null: subscriptions answer 503
  std::optional<std::string> admin_token;          // unset: admin endpoints answer 403
  std::optional<std::string> hub_webhook_secret;   // unset: /api/v1/hub-webhooks answers 404
  std::string hub_url = "https://huggingface.co";  // links in feeds and badges
  const Clock* clock = &SystemClock();             // never null; must be thread-safe
  ApiTuning tuning{};
  // Opens one more read connection to the store (the read pool's workers each get one);
  // unset: heavy routes run on the network thread too.
  std::function<Result<std::unique_ptr<store::Store>>()> open_reader;
};

class ApiServer {
 public:
  // Binds and starts accepting. Errors: a listen address that does not parse, or bind/listen
  // failing (address in use, permission).
  static Result<std::unique_ptr<ApiServer>> Start(const config::ApiConfig& config, ApiDeps deps);
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
