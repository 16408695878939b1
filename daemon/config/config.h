#pragma once

// The hubwatch configuration file: JSON, documented in daemon/hubwatch.example.json.
//
//   {"store": "hubwatch.db",
//    "hub": {"endpoint": "http://127.0.0.1:8080", "token_file": "token", "max_concurrent": 8},
//    "repos": [{"id": "google/gemma-2-9b-it", "refs": ["main"]}],
//    "follow": [{"owner": "Qwen", "match": "Qwen3*"}],
//    "poll": {"interval_s": 900, "advise_cosmetic": false}}
//
// Relative paths are relative to the directory of the config file. Unknown keys are errors (a
// typo must not silently become a default). Every error is InvalidInput (the operator's input),
// names the file and the key, and quotes at most ~80 characters of the offending value; nothing
// here throws. Plain value types.

#include <boost/container/static_vector.hpp>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"
#include "daemon/config/follow_rule.h"
#include "tracker/derivatives/derivative.h"
#include "tracker/hub/hub_settings.h"

namespace hubwatch::config {

// Which derivatives of a repo are followed ("derivatives": true, or {"max", "relations"}).
struct DerivativesConfig {
  bool enabled = false;
  int64_t max = 200;  // followed at most, over all relations, best ranked first (1..1000)
  // Inline, not on the heap: a configuration of 10,000 repos holds 10,000 of these.
  boost::container::static_vector<derivatives::Relation, 4> relations{
      derivatives::Relation::kFinetune, derivatives::Relation::kAdapter,
      derivatives::Relation::kQuantized, derivatives::Relation::kMerge};
};

struct RepoConfig {
  std::string id;
  std::vector<std::string> refs{"main"};
  std::vector<std::string> pins;  // the revisions its users run (7-40 hex digits each)
  DerivativesConfig derivatives;
};

// One entry of "repos" (`where`: "repos[3]"), checked as LoadConfig checks the rest.
Result<RepoConfig> ParseRepoEntry(const nlohmann::json& entry, const std::string& where);

struct HubOptionsConfig {
  std::optional<std::string> endpoint;    // else HF_ENDPOINT, else https://huggingface.co
  std::optional<std::string> token_file;  // else HF_TOKEN, else HF_TOKEN_PATH
  // A PEM bundle of the CAs trusted for the Hub and its CDN instead of the system store.
  std::optional<std::string> ca_file;
  int max_concurrent = 8;  // transfers in flight
  uint64_t max_safetensors_header_bytes = 25'000'000;
  // The secret the Hub's webhooks send in X-Webhook-Secret; unset: POST /api/v1/hub-webhooks
  // answers 404 (no webhook is expected).
  std::optional<std::string> webhook_secret_file;
};

struct PollConfig {
  // With hints on: how often the Hub's model listing is read; off: how often each repo is.
  int64_t interval_s = 900;
  // Change hints ("listing", the default): the listing and the Hub's webhooks say which repos
  // moved, and every repo is still polled once per reconcile_interval_s. Off ("off"): every
  // repo is polled every interval_s.
  bool hints = true;
  int64_t reconcile_interval_s = 21600;
  int64_t listing_page_size = 1000;  // the listing's limit= per page
  // How often the derivatives of each repo that follows them are listed (and those at a new
  // head read). A round runs only while no poll is due: derivatives never delay a poll.
  int64_t derivatives_interval_s = 3600;
  bool advise_cosmetic = false;   // cosmetic changes are stored; advised only when true
  int64_t settle_window_s = 600;  // a burst of commits is advised once it has been quiet this long
  int max_concurrent = 4;         // repos polled at once
  // Requests per window the scheduler allows itself; 0: 80% of the Hub's documented quota
  // (api 500 anonymous / 1000 with a token; resolvers 3000 / 5000).
  int64_t api_quota = 0;
  int64_t resolvers_quota = 0;
  int64_t quota_window_s = 300;
  // The percent of the api budget per window that polls started by Hub webhooks may spend
  // (0 to 100; 0: webhooks never start a poll). Anyone holding the webhook secret can send
  // them, so the rest stays the schedule's (SchedulerOptions::webhook_percent).
  int64_t webhook_budget_percent = 25;
  // The repos all follow rules together bring at most (each rule has its own max_repos too).
  int64_t max_followed_repos = 10000;
};

struct ApiConfig {
  std::string listen = "127.0.0.1:8437";
  std::optional<std::string> admin_token_file;  // admin endpoints answer 401/403 without it
  uint64_t max_body_bytes = 4 << 20;
  uint64_t max_plan_body_bytes = 1 << 20;
  int max_connections = 256;
  int64_t header_timeout_s = 10;
  int64_t read_timeout_s = 30;
};

struct SubscriptionConfig {
  std::string url;                 // http(s) webhook target
  std::string secret_file;         // holds the whsec_... secret
  std::string repos = "*";         // glob over repo ids
  std::vector<std::string> kinds;  // empty: every kind
  std::string min_impact = "behavioral";
  bool backfill = false;  // also the advisories of history (changes before the repo was tracked)
};

struct WebhookConfig {
  bool allow_private_targets = false;  // loopback, private, link-local targets (tests only)
  int64_t retry_for_s = 3 * 24 * 3600;
  int64_t timeout_s = 10;
};

struct LogConfig {
  std::string format = "text";  // "text" | "json" (journald prefixes when JOURNAL_STREAM is set)
  std::string level = "info";   // trace, debug, info, warn, error
};

struct DaemonConfig {
  std::string path;  // the file it was read from
  std::string store = "hubwatch.db";
  HubOptionsConfig hub;
  std::vector<RepoConfig> repos;
  std::vector<FollowRule> follow;  // follow rules, by distinct name
  PollConfig poll;
  ApiConfig api;
  std::vector<SubscriptionConfig> subscriptions;
  WebhookConfig webhooks;
  LogConfig log;
};

// Reads (at most 64 MiB) and validates the file; errors name the file and the key. A missing
// file, or a directory, is bad input.
Result<DaemonConfig> LoadConfig(const std::string& path);
// Parses config JSON text; `base_dir` resolves relative paths ("" = as given).
Result<DaemonConfig> ParseConfig(std::string_view text, const std::string& base_dir);

// `value` quoted for an error message: JSON string syntax (control characters escaped, invalid
// UTF-8 replaced), at most `max` + 2 bytes with the quotes, then "..." when cut. Paths get more
// room than values: their end names the file.
inline constexpr size_t kMaxQuotedValue = 80;
inline constexpr size_t kMaxQuotedPath = 160;
std::string QuoteForError(std::string_view value, size_t max = kMaxQuotedValue);

// A secret file's text without surrounding whitespace: at most 4 KiB, one line of printable
// text (a NUL or any other control character is an error, not a cut). Errors are bad input,
// start with `where` (the config key) and name the path, never the content.
Result<std::string> ReadSecretFile(const std::string& path, const std::string& where);
// The token from hub.token_file (trimmed), if configured. Never logged.
Result<std::optional<std::string>> ReadTokenFile(const DaemonConfig& config);
// The Hub webhook secret from hub.webhook_secret_file (trimmed), if configured. Never logged.
Result<std::optional<std::string>> ReadWebhookSecret(const DaemonConfig& config);
// The admin token from admin_token_file (trimmed), if configured. Never logged.
Result<std::optional<std::string>> ReadAdminToken(const DaemonConfig& config);
// The Hub endpoint and token: the config's, else the environment's (hub::LoadHubSettings).
Result<hub::HubSettings> HubSettingsFor(const DaemonConfig& config);

}  // namespace hubwatch::config
