#pragma once

// fakehub: a Hugging Face Hub on loopback with the real wire format, for tests
// and benchmarks. Two Boost.Beast listeners: the Hub (API, resolve, resolve-cache, raw) and a
// "CDN" on another loopback address that serves LFS content behind signed-looking URLs.
// Everything a test needs is in-process: fault rules, repo mutations (super-squash, delete,
// gate, rename), spam children of a repo, the request log, the replay clock. The same controls
// are on the wire under /_fakehub/ for the fakehub executable.
//
// Change hints: GET /api/models speaks the Hub's listing (camelCase sort keys, descending only,
// expand[], an opaque keyset cursor in Link; listing.cc), optional background churn makes the
// Hub-wide feed as noisy as the real one (churn.h), and commits landing on main (replay clock,
// PushCommit, super-squash) as well as renames and deletions are POSTed as Hub webhooks to a
// loopback receiver (webhook.h).
//
// Thread safety: FakeHub runs its own io_context thread (and, with a webhook, a delivery
// thread); every method may be called from any thread. FakeHub owns both threads; Stop() (or
// the destructor) joins them, after which mutations still work but send no webhook.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"
#include "tests/fakehub/repo_model.h"

namespace hubwatch::fakehub {

enum class Mode { kStatic, kReplay };

// A token the Hub knows. Unknown tokens get 401 "Invalid credentials in Authorization header".
struct FakeUser {
  std::string token;
  std::string name;
  bool approved_for_gated = true;
};

struct FakeHubOptions {
  std::string fixtures_dir;  // "" = no fixtures
  // More fixture directories, served together with fixtures_dir (tests/fixtures/hub-derivatives
  // beside tests/fixtures/hub); a repo id defined twice across them does not load.
  std::vector<std::string> fixtures_dirs;
  std::vector<Repo> extra_repos;  // e.g. GenerateSyntheticRepos(...)
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string cdn_host = "127.0.0.2";
  uint16_t cdn_port = 0;
  Mode mode = Mode::kStatic;
  double speed = 1.0;                   // replay: Hub seconds per real second
  std::optional<int64_t> replay_start;  // replay: Unix seconds; default the earliest commit
  int64_t api_quota = 1000;             // per window ("api" bucket)
  int64_t resolvers_quota = 5000;       // per window ("resolvers" bucket)
  int64_t window_seconds = 300;
  int tree_page_size = 1000;
  int tree_expand_page_size = 50;
  int commits_page_size = 50;
  bool relative_links = false;  // Link targets as paths instead of absolute URLs
  // Where clients reach the listeners when a front (a TLS-terminating proxy) stands before them:
  // every absolute URL fakehub writes (Link, Location, webhook payloads) uses these origins
  // instead of the listeners' own. "scheme://loopback-host:port", no path; "" = the listener's.
  std::string public_hub_url;
  std::string public_cdn_url;
  std::vector<FakeUser> users;
  // Background churn (churn.h): this many untracked repos get a new head per minute, on the
  // replay clock (wall clock in static mode). 0 = none.
  double churn_per_minute = 0;
  int churn_repos = 5000;  // the background pool: churn-owner-XXX/bg-model-XXXXX
  int churn_owners = 500;
  // Webhooks (webhook.h): "http://127.x.y.z:PORT/path"; any other host is refused by Start().
  // "" = none. The secret goes in X-Webhook-Secret.
  std::string webhook_url;
  std::string webhook_secret;
};

enum class FaultAction {
  kStatus,                 // answer `status` (5xx, 408, ...) with a JSON error
  kRateLimit,              // 429 with RateLimit r=0;t=reset_seconds
  kRetryAfter,             // `status` (default 429) with Retry-After: retry_after
  kDelay,                  // answer normally after `delay`
  kReset,                  // close the connection with a TCP reset, no response
  kTruncate,               // send half the body under the full Content-Length, then close
  kInvalidJson,            // replace the body with broken JSON
  kWrongLength,            // declare a Content-Length shorter than the body, then close
  kHugeSafetensorsHeader,  // content whose 8-byte prefix claims a 10 GB header
  kIgnoreRange,            // answer Range requests with 200 and the whole file
  kRedirectOffHost,        // 302 to the same path and query on the CDN's origin (another host)
};

struct FaultRule {
  std::string server = "hub";  // "hub", "cdn" or "any"
  std::string method;          // "" = any
  std::string path_regex;      // ECMAScript regex searched in the raw path; "" = any
  FaultAction action = FaultAction::kStatus;
  int status = 503;
  std::string retry_after = "1";
  int64_t reset_seconds = 30;
  std::chrono::milliseconds delay{0};
  int times = -1;  // requests it applies to; -1 = unlimited
};

// {"action": "status", "status": 503, "path": "/api/...", "method": "GET", "server": "hub",
//  "times": 2, "retry_after": "5", "reset_seconds": 55, "delay_ms": 100}
Result<FaultRule> ParseFaultRule(std::string_view json);

// One request served, or one webhook delivered (server "webhook", method "POST", path and query
// of the receiver's URL, status = the receiver's answer or 0 when it could not be reached).
struct LoggedRequest {
  uint64_t seq = 0;
  std::string server;  // "hub", "cdn" or "webhook"
  std::string method;
  std::string path;  // raw, as sent
  std::string query;
  int status = 0;      // 0: connection reset by a fault
  uint64_t bytes = 0;  // body bytes answered
  bool authorization = false;
  std::string range;
  std::string if_none_match;
  std::string user_agent;
  uint64_t connection = 0;  // per-listener connection number (reuse shows as repeats)
  std::string body;         // webhook deliveries only: the JSON payload sent
};

class HubState;
class WebhookSender;

class FakeHub {
 public:
  static Result<std::unique_ptr<FakeHub>> Start(FakeHubOptions options);
  ~FakeHub();  // Stop()

  std::string endpoint() const;      // "http://127.0.0.1:PORT" (the listener, never the front)
  std::string cdn_endpoint() const;  // "http://127.0.0.2:PORT"

  void AddFault(FaultRule rule);
  void ClearFaults();
  std::vector<LoggedRequest> RequestLog() const;
  void ClearLog();

  Status SuperSquash(const std::string& repo, const std::string& branch = "main",
                     const std::string& message = "");
  Status DeleteRepo(const std::string& repo);
  Status SetGated(const std::string& repo, std::optional<std::string> mode);
  Status SetDisabled(const std::string& repo, bool disabled);
  Status RenameRepo(const std::string& from, const std::string& to);
  // Appends a commit on main dated replay-now (wall-clock now in static mode, never before the
  // current head): `files` (path -> text) are added or replaced as small git files. It shows at
  // once in refs, commits, tree, resolve and the listing, and fires a webhook. Replay commits of
  // that repo not yet landed are dropped (main has moved on without them). `new_sha`, when
  // given, receives the commit id.
  Status PushCommit(const std::string& repo, const std::map<std::string, std::string>& files,
                    const std::string& title, std::string* new_sha = nullptr);
  // Moves the replay clock; commits it passes land now (webhooks are queued before it returns).
  void AdvanceReplayClock(std::chrono::seconds by);
  void ResetRateLimits();
  void SetRelativeLinks(bool relative);
  size_t repo_count() const;
  // Serves `repos` from now on (new ids only; else InvalidInput and none is added). No webhook.
  Status AddRepos(std::vector<Repo> repos);
  // `count` throwaway children of `upstream` tagged base_model:{relation}:{upstream}, with no
  // downloads or likes, the newest dated now (synthetic.h, GenerateSpamChildren); their ids.
  // Also POST /_fakehub/spam {"upstream": ID, "count": N, "relation": R}.
  Result<std::vector<std::string>> AddSpamChildren(const std::string& upstream, int count,
                                                   const std::string& relation = "adapter");

  void Stop();

 private:
  class Server;
  FakeHub() = default;
  std::shared_ptr<HubState> state_;
  std::unique_ptr<WebhookSender> webhooks_;  // null without options.webhook_url
  std::unique_ptr<Server> server_;
};

}  // namespace hubwatch::fakehub
