#include "tracker/hub/backoff.h"

#include <algorithm>
#include <cmath>

namespace hubwatch::hub {

std::chrono::milliseconds FullJitterDelay(const RetryPolicy& policy, int attempt, Random& random) {
  const int shift = std::clamp(attempt, 0, 30);
  const double ceiling =
      std::min(static_cast<double>(policy.cap.count()),
               static_cast<double>(policy.base.count()) * std::ldexp(1.0, shift));
  return std::chrono::milliseconds(static_cast<int64_t>(random.NextUnit() * (ceiling + 1.0)));
}

bool IsRetryableStatus(int status) { return status == 408 || status == 429 || status / 100 == 5; }

}  // namespace hubwatch::hub
