#pragma once

// An HTTP/1.1 session: one per accepted connection. It reads a request (the header under
// header_timeout_s, which is also the keep-alive idle time; the body under the route's limit
// and read_timeout_s), dispatches it through the core, writes the reply and repeats while
// keep-alive holds. Malformed HTTP, a bad chunk in a chunked body, an oversized header or body
// get their 4xx and close. HEAD is answered as GET without the body.
//
// A session holds at most one reply at a time: it reads the next request only once the reply
// is written, and a write stalled for read_timeout_s drops the client. Replies are capped at
// kMaxReplyBytes (http_message.h).
//
// In a probe slot (over max_connections) a session answers one request, and only GET or HEAD
// of /healthz and /readyz; anything else gets 503. While it waits on its client there (the
// header, a body, the drain after an error) the slot is preemptible: a new connection that
// finds every slot taken closes it (server_core.h). A GET /api/v1/stream over the stream limit
// gets 503; otherwise the session hands its socket to an SseStream and ends.
//
// Thread safety: network thread only.

#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "daemon/api/server_core.h"

namespace hubwatch::api {

// Starts a session on `socket` in `slot` (kGeneral or kProbe); it registers with the core and
// keeps itself alive through its pending operations.
void StartHttpSession(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerCore> core,
                      Slot slot);

}  // namespace hubwatch::api
