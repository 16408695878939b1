#pragma once

// WebhookSender: the seam through which webhooks are POSTed. hub::Transport speaks GET and HEAD
// only and cannot vet the address it connects to, so deliveries have their own seam; it reuses
// the hub's value types for headers, responses and transport errors. Production uses
// CurlWebhookSender; tests may script one.

#include <chrono>
#include <functional>
#include <string>

#include "tracker/hub/http_types.h"

namespace hubwatch::subscriptions {

struct WebhookRequest {
  std::string url;
  hub::HttpHeaders headers;  // sent as given
  std::string body;          // POSTed as is
  std::chrono::milliseconds timeout{10'000};
  bool allow_private_targets = false;  // false: refuse to connect to a non-public address
};

using WebhookCallback = std::function<void(hub::TransportOutcome)>;

// Thread safety: Post is called on one event-loop thread, and `done` runs there.
class WebhookSender {
 public:
  virtual ~WebhookSender() = default;
  // POSTs the request and calls `done` exactly once, later, never inside Post. Redirects are
  // never followed (a 3xx is a response like any other). A connection the target policy
  // refuses fails with kConnect and a message that starts with "refused".
  virtual void Post(WebhookRequest request, WebhookCallback done) = 0;
};

}  // namespace hubwatch::subscriptions
