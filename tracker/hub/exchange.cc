#include "tracker/hub/exchange.h"

#include <unordered_map>

#include "tracker/hub/etag_revalidation.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

using std::chrono::milliseconds;

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// The token crosses the network only inside TLS: over cleartext it may go to loopback only.
std::optional<HubError> CleartextTokenRefusal(const std::string& url) {
  if (SplitUrl(url).scheme != "http" || IsLoopbackHost(HostOf(url))) return std::nullopt;
  HubError error;
  error.kind = HubErrorKind::kInvalidArgument;
  error.url = url;
  error.detail = "refused to send the Hub token over cleartext http:// to " + HostOf(url) +
                 ", which is not loopback (nothing was sent): use https";
  return error;
}

}  // namespace

struct ExchangeRunner::State {
  ExchangeOptions options;
  Transport& transport;
  TimerClock& clock;
  Random& random;
  EtagCache* cache;
  Accounting& accounting;
  LogSink log;
  std::string endpoint_origin;
  RateBuckets buckets;
  std::unordered_map<TimerId, std::function<void()>> pending_waits;  // fired on Shutdown
  bool shut_down = false;

  State(ExchangeOptions o, Transport& t, TimerClock& c, Random& r, EtagCache* e, Accounting& a,
        LogSink l)
      : options(std::move(o)),
        transport(t),
        clock(c),
        random(r),
        cache(e),
        accounting(a),
        log(std::move(l)) {
    endpoint_origin = OriginOf(options.settings.endpoint);
  }

  void Log(std::string line) {
    if (log) log(RedactSecret(std::move(line), options.settings.token));
  }
};

// One exchange in flight. Owned by the callbacks that continue it.
struct ExchangeRunner::Call : std::enable_shared_from_this<Call> {
  std::shared_ptr<State> state;
  ExchangeRequest request;
  CallStats* stats;
  std::function<void(HubResult<ExchangeResponse>)> done;
  std::optional<CachedResponse> cached;
  std::string cache_key;
  std::string hop_url;
  int hops = 0;
  int attempt = 0;  // retries used
  HttpHeaders identity;

  void Begin() {
    hop_url = request.url;
    hops = 0;
    identity = HttpHeaders();
    WaitForBucketThenSend();
  }

  void Finish(HubResult<ExchangeResponse> result) {
    auto callback = std::move(done);
    callback(std::move(result));
  }

  void After(milliseconds delay, std::function<void()> next) {
    stats->waited += delay;
    state->accounting.RecordWait(delay);
    auto weak_state = std::weak_ptr<State>(state);
    auto id = std::make_shared<TimerId>(0);
    auto self = shared_from_this();
    auto on_cancel = [self] {
      HubError error;
      error.kind = HubErrorKind::kShutdown;
      error.url = self->request.url;
      error.detail = "client shut down during a wait";
      self->Finish(error);
    };
    *id = state->clock.RunAt(state->clock.Now() + delay, [weak_state, id, next = std::move(next)] {
      if (auto s = weak_state.lock()) s->pending_waits.erase(*id);
      next();
    });
    state->pending_waits[*id] = std::move(on_cancel);
  }

  void WaitForBucketThenSend() {
    if (state->shut_down) {
      HubError error;
      error.kind = HubErrorKind::kShutdown;
      error.url = request.url;
      return Finish(error);
    }
    const std::string bucket = BucketOf(hop_url);
    const SteadyTime now = state->clock.Now();
    if (const std::optional<SteadyTime> until = state->buckets.PausedUntil(bucket, now)) {
      const auto delay = std::chrono::ceil<milliseconds>(*until - now);
      state->Log("hub: bucket " + bucket + " paused, waiting " + std::to_string(delay.count()) +
                 "ms before " + hop_url);
      auto self = shared_from_this();
      After(delay, [self] { self->WaitForBucketThenSend(); });
      return;
    }
    Send();
  }

  void Send() {
    HttpRequest http;
    http.method = request.method;
    http.url = hop_url;
    http.headers = request.headers;
    http.headers.Set("User-Agent", state->options.user_agent);
    if (!state->options.settings.token.empty() && OriginOf(hop_url) == state->endpoint_origin) {
      if (std::optional<HubError> refused = CleartextTokenRefusal(hop_url)) {
        // Never inline (Send may run inside Run): post through the clock.
        auto self = shared_from_this();
        state->clock.RunAt(state->clock.Now(), [self, e = *refused] { self->Finish(e); });
        return;
      }
      http.headers.Set("Authorization", "Bearer " + state->options.settings.token.reveal());
    }
    if (hops == 0 && cached) http.headers.Set("If-None-Match", cached->etag);
    http.timeout = request.timeout;
    http.connect_timeout = state->options.connect_timeout;
    http.max_body_bytes = request.max_body_bytes;
    http.accept_compressed = request.accept_compressed;
    ++stats->requests;
    auto self = shared_from_this();
    state->transport.Start(
        std::move(http), [self](TransportOutcome outcome) { self->OnOutcome(std::move(outcome)); });
  }

  void OnOutcome(TransportOutcome outcome) {
    HttpResponse& response = outcome.response;
    stats->bytes_sent += response.bytes_sent;
    stats->bytes_received += response.bytes_received;
    state->accounting.Record(request.kind, outcome.ok() ? response.status : 0, response.bytes_sent,
                             response.bytes_received);
    if (state->shut_down) {
      HubError error;
      error.kind = HubErrorKind::kShutdown;
      error.url = request.url;
      return Finish(error);
    }
    if (!outcome.ok()) {
      const TransportError& err = *outcome.error;
      // A certificate that failed verification fails the same way on every retry.
      if (err.kind != TransportErrorKind::kShutdown && err.kind != TransportErrorKind::kProtocol &&
          err.kind != TransportErrorKind::kCertificate) {
        return RetryOr(ErrorFromTransport(err, hop_url), std::nullopt);
      }
      return Finish(ErrorFromTransport(err, hop_url));
    }
    const RateSignal signal =
        state->buckets.Observe(response.headers, hop_url, state->clock.Now(),
                               state->clock.WallNow(), state->options.retry.max_server_wait);
    if (!signal.paused_bucket.empty()) {
      state->Log("hub: bucket " + signal.paused_bucket + " exhausted, pausing " +
                 std::to_string(signal.pause.count()) + "ms");
    }
    const std::optional<milliseconds> server_wait = signal.server_wait;
    const int status = response.status;
    const bool endpoint_hop = OriginOf(hop_url) == state->endpoint_origin;
    if (endpoint_hop && response.headers.Has("X-Repo-Commit")) {
      // Later Hub hops (resolve-cache) refine what earlier ones said, never erase it.
      for (const char* name : {"X-Repo-Commit", "X-Linked-Etag", "X-Linked-Size", "ETag"}) {
        if (auto v = response.headers.Get(name)) identity.Set(name, std::string(*v));
      }
    }
    if (IsRedirect(status)) return OnRedirect(std::move(response));
    if (status == 304) return OnNotModified(std::move(response));
    if (status == 429) {
      HubError error = ErrorFromResponse(response, hop_url);
      if (server_wait) error.rate_limit_reset = state->clock.WallNow() + *server_wait;
      return RetryOr(std::move(error), server_wait);
    }
    if (IsRetryableStatus(status)) {
      return RetryOr(ErrorFromResponse(response, hop_url), server_wait);
    }
    if (status < 200 || status >= 300) return Finish(ErrorFromResponse(response, hop_url));
    if (request.use_etag_cache && status == 200 && !response.body_limit_hit) Remember(response);
    ExchangeResponse result;
    result.final_url = hop_url;
    result.identity = identity;
    result.response = std::move(response);
    Finish(std::move(result));
  }

  void RetryOr(HubError error, std::optional<milliseconds> server_wait) {
    const RetryPolicy& policy = state->options.retry;
    if (server_wait && *server_wait > policy.max_server_wait) {
      error.kind = HubErrorKind::kRateLimited;
      error.detail += (error.detail.empty() ? "" : "; ") + std::string("server asks to wait ") +
                      std::to_string(server_wait->count() / 1000) + "s, over the limit of " +
                      std::to_string(policy.max_server_wait.count() / 1000) + "s";
      error.rate_limit_reset = state->clock.WallNow() + *server_wait;
      return Finish(std::move(error));
    }
    if (attempt >= policy.max_retries) return Finish(std::move(error));
    const milliseconds delay =
        server_wait ? *server_wait : FullJitterDelay(policy, attempt, state->random);
    ++attempt;
    ++stats->retries;
    state->Log("hub: " + error.ToString() + "; retry " + std::to_string(attempt) + "/" +
               std::to_string(policy.max_retries) + " in " + std::to_string(delay.count()) + "ms");
    auto self = shared_from_this();
    After(delay, [self] { self->Begin(); });
  }

  void OnRedirect(HttpResponse response) {
    auto location = response.headers.Get("Location");
    if (!location)
      return Finish(ProtocolError("redirect without Location", hop_url, response.status));
    std::optional<std::string> target = ResolveReference(hop_url, *location);
    if (!target || OriginOf(*target).empty()) {
      return Finish(ProtocolError("redirect to an unusable Location", hop_url, response.status));
    }
    const bool same_origin = OriginOf(*target) == OriginOf(hop_url);
    if (request.redirects == RedirectPolicy::kSameOrigin && !same_origin) {
      ExchangeResponse result;
      result.final_url = hop_url;
      result.identity = identity;
      result.response = std::move(response);
      return Finish(std::move(result));
    }
    if (request.redirects == RedirectPolicy::kRefuseOffOrigin && !same_origin) {
      return Finish(ProtocolError("redirected to another host (" + OriginOf(*target) +
                                      "), not followed: API calls stay on the Hub's origin",
                                  hop_url, response.status));
    }
    // Only a redirect that is followed: kSameOrigin returns the others unfollowed.
    if (SplitUrl(hop_url).scheme == "https" && SplitUrl(*target).scheme != "https") {
      return Finish(ProtocolError(
          "refused a redirect from https to " + OriginOf(*target) + ": it would leave TLS", hop_url,
          response.status));
    }
    if (++hops > state->options.max_redirects) {
      return Finish(
          ProtocolError("more than " + std::to_string(state->options.max_redirects) + " redirects",
                        request.url, response.status));
    }
    ++stats->redirects;
    hop_url = *target;
    WaitForBucketThenSend();
  }

  void OnNotModified(HttpResponse response) {
    if (!cached) return Finish(ProtocolError("304 without a cached copy", hop_url, 304));
    ++stats->not_modified;
    ExchangeResponse result;
    result.final_url = hop_url;
    result.from_cache = true;
    result.response = CachedOk(*cached, hop_url);
    result.identity = CachedIdentity(*cached, identity);
    (void)response;
    Finish(std::move(result));
  }

  void Remember(const HttpResponse& response) {
    if (state->cache == nullptr) return;
    if (std::optional<CachedResponse> entry = CacheEntryFor(response, identity)) {
      state->cache->Store(cache_key, std::move(*entry));
    }
  }
};

ExchangeRunner::ExchangeRunner(ExchangeOptions options, Transport& transport, TimerClock& clock,
                               Random& random, EtagCache* cache, Accounting& accounting,
                               LogSink log)
    : state_(std::make_shared<State>(options, transport, clock, random, cache, accounting,
                                     std::move(log))),
      options_(std::move(options)) {}

ExchangeRunner::~ExchangeRunner() { Shutdown(); }

void ExchangeRunner::Run(ExchangeRequest request, CallStats* stats,
                         std::function<void(HubResult<ExchangeResponse>)> done) {
  auto call = std::make_shared<Call>();
  call->state = state_;
  call->stats = stats;
  call->done = std::move(done);
  if (state_->options.settings.offline) {
    HubError error;
    error.kind = HubErrorKind::kOffline;
    error.url = request.url;
    error.detail = "HF_HUB_OFFLINE is set: no request sent";
    // Never inline: post through the clock.
    state_->clock.RunAt(state_->clock.Now(), [call, error] { call->Finish(error); });
    return;
  }
  if (request.use_etag_cache && state_->cache != nullptr && request.method == HttpMethod::kGet) {
    call->cache_key = "GET " + request.url;
    call->cached = state_->cache->Lookup(call->cache_key);
  }
  call->request = std::move(request);
  call->Begin();
}

BucketStatus ExchangeRunner::bucket_status(const std::string& bucket) const {
  return state_->buckets.Status(bucket, state_->clock.Now());
}

void ExchangeRunner::Shutdown() {
  if (state_->shut_down) return;
  state_->shut_down = true;
  auto waits = std::move(state_->pending_waits);
  state_->pending_waits.clear();
  for (auto& [id, on_cancel] : waits) {
    state_->clock.Cancel(id);
    state_->clock.RunAt(state_->clock.Now(), std::move(on_cancel));
  }
}

}  // namespace hubwatch::hub
