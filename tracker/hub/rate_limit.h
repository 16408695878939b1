#pragma once

// Rate-limit signals from the Hub (IETF draft-ietf-httpapi-ratelimit-headers-09) and Retry-After
// (RFC 9110 §10.2.3):
//   RateLimit: "api";r=0;t=55                        (remaining, seconds until the window resets)
//   RateLimit-Policy: "fixed window";"api";q=500;w=300 (quota, window seconds)
//   Retry-After: 120  |  Retry-After: Wed, 21 Oct 2026 07:28:00 GMT
// Pure functions; malformed input gives nullopt, never a crash.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/base/clock.h"

namespace hubwatch::hub {

struct RateLimitState {
  std::string bucket;  // "api", "resolvers", "pages"
  int64_t remaining = 0;
  int64_t reset_seconds = 0;
};

struct RateLimitPolicy {
  std::string kind;  // "fixed window"
  std::string bucket;
  int64_t quota = 0;
  int64_t window_seconds = 0;
};

std::optional<RateLimitState> ParseRateLimit(std::string_view header);
std::optional<RateLimitPolicy> ParseRateLimitPolicy(std::string_view header);

// IMF-fixdate, obsolete RFC 850 and asctime forms, all GMT.
std::optional<WallTime> ParseHttpDate(std::string_view text);

// Seconds to wait: delay-seconds as given, an HTTP-date measured from `now` (0 when past).
std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view header, WallTime now);

}  // namespace hubwatch::hub
