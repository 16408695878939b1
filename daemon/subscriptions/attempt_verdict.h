#pragma once

// The verdict on one finished webhook attempt: what the transport's outcome means for its
// outbox row.
//   2xx                 delivered
//   410 Gone            disabled: the subscription is to be disabled and the row fails
//   anything else       (3xx, 4xx, 5xx, timeout, connection refused, an address the target
//                       policy refuses) retried after a full-jitter exponential delay - at least
//                       Retry-After on 429/503 - until retry_for_s after the row was created,
//                       then failed
// A pure function but for the clock and `random` it reads; thread-safe as they are.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "estimator/base/clock.h"
#include "estimator/base/random.h"
#include "tracker/hub/backoff.h"
#include "tracker/hub/http_types.h"
#include "tracker/store/delivery_queue.h"

namespace hubwatch::subscriptions {

// What one attempt ended as, for the store, logs and tests.
struct AttemptReport {
  int64_t outbox_id = 0;
  int64_t subscription_id = 0;
  std::string webhook_id;
  int64_t attempt = 0;  // 1 for the first
  std::optional<int> status;
  std::string error;
  enum class Result { kDelivered, kRetry, kFailed, kDisabled } result = Result::kRetry;
  int64_t next_attempt_at = 0;  // kRetry
};

// When a row that was not delivered is tried again (DelivererOptions' fields of that name).
struct RetryRules {
  int64_t retry_for_s = 0;  // after the row was created, no more attempts
  // Delay before retry n (0-based): uniform in [0, min(cap, base * 2^n)], at least min_delay.
  // Retry-After is honoured up to max_server_wait.
  hub::RetryPolicy backoff{};
  std::chrono::seconds min_delay{1};
};

// The report of the attempt at `delivery` (its attempts + 1st) sent as `webhook_id` that ended
// with `outcome`, judged now (clock.WallNow()). REQUIRES: `outcome` is no kShutdown error (a
// transfer cut short is not an attempt).
AttemptReport JudgeAttempt(const store::Delivery& delivery, const std::string& webhook_id,
                           const hub::TransportOutcome& outcome, const RetryRules& rules,
                           const Clock& clock, Random& random);

}  // namespace hubwatch::subscriptions
