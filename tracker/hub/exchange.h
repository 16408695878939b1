#pragma once

// One logical Hub request, run to its end: the auth header (only toward the endpoint's origin),
// If-None-Match from the ETag cache, redirects, rate-limit buckets, retries with full jitter,
// accounting, and the typed error when it fails. The client's endpoint calls are built on it.
//
// Redirects are always followed here, not by curl:
//  - kSameOrigin (resolve HEAD): relative or same-origin redirects are followed with the token;
//    one to another host stops, and that 3xx is the result (its Location is the content's home);
//  - kAll (GETs): every redirect is followed; Authorization is sent only to the endpoint origin.
// Identity headers (X-Repo-Commit, X-Linked-Etag, X-Linked-Size) are taken from the last response
// of the endpoint's origin that carried X-Repo-Commit, never from another host.
//
// Buckets (rate_buckets.h): "api" (/api/..., except resolve-cache) and "resolvers". A response
// saying r=0 pauses its bucket until the reset, so every later request of that bucket waits.
//
// Thread safety: loop thread only. REQUIRES: transport, clock, random, accounting (and cache if
// given) outlive the ExchangeRunner.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "estimator/base/clock.h"
#include "tracker/hub/accounting.h"
#include "tracker/hub/backoff.h"
#include "tracker/hub/etag_cache.h"
#include "tracker/hub/hub_error.h"
#include "tracker/hub/hub_settings.h"
#include "tracker/hub/rate_buckets.h"
#include "tracker/hub/transport.h"

namespace hubwatch::hub {

// What an exchange does with a redirect to another origin (same-origin ones are followed):
//   kSameOrigin        returns the redirect itself (resolve HEAD: where LFS content lives)
//   kAll               follows it, without the token (resolve GET: the CDN)
//   kRefuseOffOrigin   fails with a protocol error (API calls: the Hub's API never leaves its
//                      origin, and following would send requests wherever a redirect points)
enum class RedirectPolicy { kSameOrigin, kAll, kRefuseOffOrigin };

struct ExchangeRequest {
  RequestKind kind = RequestKind::kRefs;
  HttpMethod method = HttpMethod::kGet;
  std::string url;
  HttpHeaders headers;  // extra headers (Range, Accept, ...)
  RedirectPolicy redirects = RedirectPolicy::kAll;
  bool use_etag_cache = false;
  bool accept_compressed = false;
  uint64_t max_body_bytes = 64ull << 20;
  std::chrono::milliseconds timeout{30'000};
};

struct ExchangeResponse {
  HttpResponse response;  // the final response (or the cached 200 on a 304)
  std::string final_url;  // the URL that produced it
  HttpHeaders identity;   // identity headers from the endpoint's origin (see above)
  bool from_cache = false;
};

struct ExchangeOptions {
  HubSettings settings;
  RetryPolicy retry;
  std::string user_agent;
  int max_redirects = 5;
  std::chrono::milliseconds connect_timeout{10'000};
};

using LogSink = std::function<void(std::string_view line)>;

class ExchangeRunner {
 public:
  ExchangeRunner(ExchangeOptions options, Transport& transport, TimerClock& clock, Random& random,
                 EtagCache* cache, Accounting& accounting, LogSink log);
  ~ExchangeRunner();

  // `done` is called exactly once, on the loop thread, never inside Run. `stats` is updated as
  // the exchange goes; REQUIRES: it lives until `done` runs.
  void Run(ExchangeRequest request, CallStats* stats,
           std::function<void(HubResult<ExchangeResponse>)> done);

  // Pending waits are dropped and their exchanges fail with kShutdown.
  void Shutdown();

  const ExchangeOptions& options() const { return options_; }
  // "api" or "resolvers".
  BucketStatus bucket_status(const std::string& bucket) const;

 private:
  struct State;
  struct Call;
  std::shared_ptr<State> state_;
  ExchangeOptions options_;
};

}  // namespace hubwatch::hub
