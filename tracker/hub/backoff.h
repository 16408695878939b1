#pragma once

// When and how often to retry. Retries happen only for 408, 429, 5xx and transport failures;
// each waits a "full jitter" delay, uniform in [0, min(cap, base * 2^attempt)], drawn from an
// injected Random so a fleet of daemons disperses after an outage and tests repeat exactly.
// Server-requested waits (Retry-After, RateLimit t=) are honoured up to max_server_wait; a longer
// request fails the call as rate limited instead of sleeping.

#include <chrono>

#include "estimator/base/random.h"

namespace hubwatch::hub {

struct RetryPolicy {
  int max_retries = 4;  // retries after the first attempt
  std::chrono::milliseconds base{1'000};
  std::chrono::milliseconds cap{30'000};
  std::chrono::milliseconds max_server_wait{5 * 60'000};
};

// attempt: 0 for the first retry.
std::chrono::milliseconds FullJitterDelay(const RetryPolicy& policy, int attempt, Random& random);

bool IsRetryableStatus(int status);

}  // namespace hubwatch::hub
