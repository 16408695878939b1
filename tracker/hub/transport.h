#pragma once

// The HTTP seam. The Hub client speaks through a Transport; production uses CurlTransport
// (libcurl multi on Asio), tests can script one.

#include <functional>

#include "tracker/hub/http_types.h"

namespace hubwatch::hub {

using TransportCallback = std::function<void(TransportOutcome)>;

// Thread safety: a Transport belongs to one event-loop thread; call it only from there.
class Transport {
 public:
  virtual ~Transport() = default;
  // Sends `request` and calls `done` exactly once with what came back. `done` always runs
  // later on the loop thread, never inside Start. Redirects are never followed here.
  virtual void Start(HttpRequest request, TransportCallback done) = 0;
};

}  // namespace hubwatch::hub
