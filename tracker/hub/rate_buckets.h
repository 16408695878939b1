#pragma once

// RateBuckets: what the Hub last said about each rate-limit bucket, and which buckets wait for
// their reset. Every request counts against one bucket (BucketOf); each response's RateLimit and
// RateLimit-Policy update the bucket they name (or the request's), and r=0 pauses that bucket
// until its reset, so every later request of that bucket waits (ExchangeRunner does the waiting).
//
// Plain value, no clock of its own: callers pass the time. Thread safety: none; the client's
// loop thread only.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "estimator/base/clock.h"
#include "tracker/hub/http_types.h"

namespace hubwatch::hub {

// What the Hub last said about one rate-limit bucket (RateLimit + RateLimit-Policy).
struct BucketStatus {
  std::optional<int64_t> remaining;        // r=
  std::optional<int64_t> quota;            // q=
  std::optional<int64_t> window_seconds;   // w=
  std::optional<SteadyTime> paused_until;  // set while the bucket waits for its reset
};

// The bucket a request to `url` counts against: "api" for /api/... except resolve-cache,
// "resolvers" for the rest.
std::string BucketOf(const std::string& url);

// What one response said about waiting.
struct RateSignal {
  // The wait the server asks for: RateLimit's reset (plus a second) at r=0, else Retry-After.
  std::optional<std::chrono::milliseconds> server_wait;
  std::string paused_bucket;  // the bucket this response paused, "" when none
  std::chrono::milliseconds pause{0};
};

class RateBuckets {
 public:
  // Reads the rate-limit headers of a response to `url`: a bucket at r=0 is paused for its
  // reset, at most `max_pause`, and never less than an earlier pause.
  RateSignal Observe(const HttpHeaders& headers, const std::string& url, SteadyTime now,
                     WallTime wall_now, std::chrono::milliseconds max_pause);

  // When `bucket` resumes, if it is paused at `now`.
  std::optional<SteadyTime> PausedUntil(const std::string& bucket, SteadyTime now) const;
  BucketStatus Status(const std::string& bucket, SteadyTime now) const;

 private:
  std::map<std::string, BucketStatus> buckets_;
  std::map<std::string, SteadyTime> paused_until_;  // bucket -> resume time
};

}  // namespace hubwatch::hub
