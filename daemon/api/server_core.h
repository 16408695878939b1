#pragma once

// ServerCore: what the listener, the HTTP sessions and the event streams of one ApiServer share
// (internal to daemon/api): the handlers' context and router, the metrics, the read pool, and
// the connection slots (api_server.h describes them). Beast-free: connections register as the
// Connection interface.
//
// Thread safety: network thread only. Dispatch() runs a heavy route's handler on the read pool;
// its reply is posted back to the network thread. Ownership: the core owns the pool; sessions
// and streams share the core (shared_ptr) and may outlive Stop(), never the io_context.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/api/api_context.h"
#include "daemon/api/basis_preparer.h"
#include "daemon/api/read_pool.h"
#include "daemon/api/router.h"
#include "daemon/api/session_metrics.h"

namespace boost::asio {
class io_context;
}

namespace hubwatch::api {

class SseStream;

// Health probes may use this many connections beyond max_connections, one request each.
//
// A probe slot is held only while its session works. One that waits on its client (for the
// header, a body, or the drain after an error) is preemptible: a new connection that finds
// every slot taken closes the first-registered of those and takes its slot. A probe sends its
// request at once, so connections that stall (a slow-loris flood) cannot keep it out, and a
// flood costs no more than before: one session per connection, one closed per new one. The
// general slots stay with whoever holds them (a stalled header until header_timeout_s).
inline constexpr int kProbeSlots = 8;

// A connection the core can close at Stop().
class Connection {
 public:
  virtual ~Connection() = default;
  virtual void Close() = 0;
};

enum class Slot {
  kGeneral,  // an HTTP session: any route
  kProbe,    // an HTTP session over max_connections: /healthz and /readyz only
  kStream,   // an event stream (it holds a general slot)
};

class ServerCore {
 public:
  // `pool` may be null: every route runs on the network thread. `preparer` may be null: every
  // estimate basis is prepared on the request's thread.
  ServerCore(const config::ApiConfig& config, ApiDeps deps, std::unique_ptr<ReadPool> pool,
             std::unique_ptr<BasisPreparer> preparer = nullptr,
             std::shared_ptr<page::BasisCache> bases = nullptr);

  const ApiContext& ctx() const { return ctx_; }
  SessionMetrics& metrics() { return metrics_; }
  boost::asio::io_context& io() { return io_; }
  bool stopped() const { return !*alive_; }

  // At most max_connections / 2 event streams (at least 1), so streams never hold every slot.
  int max_streams() const;
  int open_streams() const { return counts_[static_cast<int>(Slot::kStream)]; }
  // The slot a new connection gets: general while there is room, else a probe slot; nullopt
  // when both are full.
  std::optional<Slot> SlotForNewConnection() const;
  // Every probe slot taken: closes the preemptible probe connection registered first and frees
  // its slot; false when none is preemptible.
  bool PreemptProbe();
  // REQUIRES: `c` is alive until Unregister(c) (its destructor calls it; idempotent).
  void Register(Connection* c, std::weak_ptr<Connection> weak, Slot slot);
  void Unregister(Connection* c);
  // A probe connection says whether it waits on its client (preemptible) or works; no-op for
  // other slots and for a connection no longer registered.
  void SetPreemptible(Connection* c, bool preemptible);
  void AddStream(std::weak_ptr<SseStream> stream);

  // The router's Dispatch, with heavy routes run on the read pool (when there is one).
  void Dispatch(HttpRequest request, Respond respond, std::string* route_label);
  const Router& router() const { return router_; }

  // Closes every connection and stops the pool and the preparer (jobs not started are
  // dropped). Idempotent.
  void Stop();
  // Every event stream sends what is new.
  void OnNewAdvisories();

 private:
  struct Entry {
    std::weak_ptr<Connection> weak;
    Slot slot;
    bool preemptible = false;
  };
  size_t open_connections() const { return entries_.size(); }

  boost::asio::io_context& io_;
  ApiContext ctx_;
  Router router_;
  SessionMetrics metrics_;
  std::unique_ptr<ReadPool> pool_;
  std::unique_ptr<BasisPreparer> preparer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unordered_map<Connection*, Entry> entries_;
  int counts_[3] = {0, 0, 0};  // by Slot
  std::vector<Connection*> probes_;  // the probe slots' connections, oldest first
  std::vector<std::weak_ptr<SseStream>> streams_;
};

}  // namespace hubwatch::api
