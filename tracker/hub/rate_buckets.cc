#include "tracker/hub/rate_buckets.h"

#include <algorithm>

#include "tracker/hub/rate_limit.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {

using std::chrono::milliseconds;

std::string BucketOf(const std::string& url) {
  const std::string path = SplitUrl(url).path;
  if (path.starts_with("/api/") && !path.starts_with("/api/resolve-cache/")) return "api";
  return "resolvers";
}

RateSignal RateBuckets::Observe(const HttpHeaders& headers, const std::string& url, SteadyTime now,
                                WallTime wall_now, milliseconds max_pause) {
  RateSignal signal;
  if (auto header = headers.Get("RateLimit-Policy")) {
    if (auto policy = ParseRateLimitPolicy(*header)) {
      BucketStatus& b = buckets_[policy->bucket.empty() ? BucketOf(url) : policy->bucket];
      b.quota = policy->quota;
      b.window_seconds = policy->window_seconds;
    }
  }
  if (auto header = headers.Get("RateLimit")) {
    auto limit = ParseRateLimit(*header);
    if (limit) {
      buckets_[limit->bucket.empty() ? BucketOf(url) : limit->bucket].remaining = limit->remaining;
    }
    if (limit && limit->remaining == 0) {
      signal.server_wait = milliseconds((limit->reset_seconds + 1) * 1000);
      signal.paused_bucket = limit->bucket.empty() ? BucketOf(url) : limit->bucket;
      signal.pause = std::min(*signal.server_wait, max_pause);
      SteadyTime& until = paused_until_[signal.paused_bucket];
      until = std::max(until, now + signal.pause);
    }
  }
  if (!signal.server_wait) {
    if (auto header = headers.Get("Retry-After")) {
      if (auto seconds = ParseRetryAfter(*header, wall_now)) {
        signal.server_wait = std::chrono::duration_cast<milliseconds>(*seconds);
      }
    }
  }
  return signal;
}

std::optional<SteadyTime> RateBuckets::PausedUntil(const std::string& bucket,
                                                   SteadyTime now) const {
  auto it = paused_until_.find(bucket);
  if (it == paused_until_.end() || it->second <= now) return std::nullopt;
  return it->second;
}

BucketStatus RateBuckets::Status(const std::string& bucket, SteadyTime now) const {
  BucketStatus status;
  if (auto it = buckets_.find(bucket); it != buckets_.end()) status = it->second;
  status.paused_until = PausedUntil(bucket, now);
  return status;
}

}  // namespace hubwatch::hub
