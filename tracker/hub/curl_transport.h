#pragma once

// Transport on libcurl's multi *socket* interface driven by a Boost.Asio io_context
// (the curl_multi_socket_action pattern):
//  - every descriptor curl reports (connections, resolver and Happy Eyeballs fds) gets a watch,
//    attached with curl_multi_assign and destroyed on CURL_POLL_REMOVE (curl_sockets.h);
//  - descriptors are never owned by Asio: released (never closed) before a watch dies, and
//    closed only by curl or by our multi-wide close-socket callback, after the release;
//  - readiness waits are re-armed for as long as curl wants that direction, and, because Asio's
//    epoll reactor is edge-triggered, a direction that is still ready is re-run rather than
//    waited for;
//  - one steady_timer follows CURLMOPT_TIMERFUNCTION: -1 cancels it, 0 fires on the next loop
//    turn, and curl is never called from inside its own callbacks;
//  - orderly shutdown: fail queued and running transfers, remove every easy handle,
//    curl_multi_cleanup (which still calls the socket and close callbacks), drop the watches.
// The wire: connections are reused across transfers and polls (the multi's connection cache);
// over https, ALPN offers h2 and http/1.1 and concurrent transfers to one host multiplex on one
// h2 connection (PIPEWAIT: a transfer waits for a connection being set up rather than opening
// another); TLS sessions (and DNS answers) are shared by every easy handle through one CURLSH,
// so a reconnect resumes its session instead of a full handshake. Certificates and host names
// are always verified, against ca_file when set, else the system store; there is no switch to
// turn that off. Concurrency is capped in transfers and in connections per host.
//
// Thread safety: everything runs on the thread that runs `io`, the share included: it is used by
// this thread only, so it has no lock callbacks (libcurl needs them only across threads).
// Completion callbacks are posted to `io`. REQUIRES: io outlives the transport.

#include <cstddef>
#include <memory>
#include <string>

#include "tracker/hub/transport.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace hubwatch::hub {

struct CurlTransportOptions {
  size_t max_concurrent_transfers = 64;  // more are queued, not started
  long max_host_connections = 16;        // CURLMOPT_MAX_HOST_CONNECTIONS
  long max_total_connections = 64;       // CURLMOPT_MAX_TOTAL_CONNECTIONS
  long connection_cache_size = 64;       // idle connections kept for reuse
  bool http2 = true;                     // negotiate h2 over TLS, multiplex
  size_t easy_handle_pool = 64;          // finished easy handles kept for reuse
  std::string ca_file;                   // PEM bundle trusted instead of the system store
};

class CurlTransport final : public Transport {
 public:
  CurlTransport(boost::asio::io_context& io, CurlTransportOptions options = {});
  ~CurlTransport() override;  // Shutdown()
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  void Start(HttpRequest request, TransportCallback done) override;
  // Fails every queued and running transfer with kShutdown and closes all connections.
  // Idempotent; Start after it fails at once (asynchronously).
  void Shutdown();

  size_t running_transfers() const;
  size_t queued_transfers() const;
  size_t watched_sockets() const;  // descriptors curl currently asks us to watch

 private:
  class Engine;
  std::unique_ptr<Engine> engine_;
};

}  // namespace hubwatch::hub
