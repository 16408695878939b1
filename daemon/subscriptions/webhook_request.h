#pragma once

// The POST of one delivery, signed as Standard Webhooks say: body = the advisory's OSV JSON as
// stored; headers Content-Type: application/json, User-Agent (when one is set), and the trio
// webhook-id, webhook-timestamp (Unix seconds) and webhook-signature (v1, HMAC over
// id.timestamp.body with the subscription's secret; signature.h). A pure function; thread-safe.

#include <chrono>
#include <cstdint>
#include <string>

#include "daemon/subscriptions/webhook_sender.h"
#include "estimator/base/result.h"
#include "tracker/store/delivery_queue.h"

namespace hubwatch::subscriptions {

// How every request is sent (DelivererOptions' fields of those names).
struct RequestSettings {
  std::chrono::milliseconds timeout{10'000};
  bool allow_private_targets = false;
  std::string user_agent{};  // "": no User-Agent header
};

// The request for `delivery` sent as `webhook_id` at `timestamp`. An InvalidInput error, whose
// message starts with "refused: " and never holds the secret, when the subscription's secret is
// not valid or the target policy refuses its URL (target_policy.h): nothing is to be sent.
Result<WebhookRequest> SignedRequest(const store::Delivery& delivery, const std::string& webhook_id,
                                     int64_t timestamp, const RequestSettings& settings);

}  // namespace hubwatch::subscriptions
