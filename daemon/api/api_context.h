#pragma once

// What the route handlers share (internal to daemon/api): the dependencies, the checks every
// resource route starts with, the JSON views of store records, and one Register* function per
// group of routes (routes_*.cc).
//
// The checks return the reply to send when they fail, so a handler reads
//   if (auto failed = RepoFromParams(params, &repo)) return respond(std::move(*failed));
//
// Thread safety: network thread only, like the router; heavy routes' handlers run on the read
// pool and use only reads() and the immutable fields.

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "daemon/api/api_server.h"
#include "daemon/api/http_message.h"
#include "daemon/api/page_reply.h"
#include "daemon/api/query_params.h"
#include "daemon/api/router.h"
#include "daemon/config/config.h"
#include "daemon/page/basis_cache.h"
#include "daemon/page/lru_cache.h"
#include "estimator/base/result.h"
#include "estimator/estimate.h"
#include "tracker/store/records.h"

namespace hubwatch::service {
class Metrics;
class StoreAccess;
}  // namespace hubwatch::service
namespace hubwatch::store {
class Store;
}

namespace hubwatch::api {

class BasisPreparer;
class ServiceControl;

// What the estimate bases kept for pages and re-estimates may weigh together: a modelled
// model's is tens of KB; the largest graph a checkpoint may make (kMaxCheckpointSpecs) about
// 15 MB.
inline constexpr size_t kBasisCacheBytes = 64 << 20;

class SubscriptionsHandler;

struct ApiContext {
  config::ApiConfig config;
  service::StoreAccess* store = nullptr;
  service::Metrics* metrics = nullptr;
  ServiceControl* control = nullptr;
  SubscriptionsHandler* subscriptions = nullptr;
  std::optional<std::string> admin_token;
  std::optional<std::string> hub_webhook_secret;  // unset: no Hub webhook is expected
  std::string hub_url;
  const Clock* clock = &SystemClock();  // never null; read from the network and pool threads
  ApiTuning tuning;
  // The estimate bases of the revisions pages and re-estimates showed, by repo@sha, up to
  // kBasisCacheBytes (thread-safe), and what prepares those too costly for a request
  // (request_basis.h; null without a read pool).
  std::shared_ptr<page::BasisCache> bases = page::MakeBasisCache(kBasisCacheBytes);
  BasisPreparer* preparer = nullptr;
  // Rendered model pages by ETag and encoding, the tuning.page_cache_entries most recently
  // served (thread-safe; about 150 KB each at most). Set by ServerCore.
  std::shared_ptr<page::LruCache<EncodedBody>> pages;
  // False once the server stopped: callbacks that outlive a request (a write's `then`) copy
  // this and return early instead of touching a server that may be gone.
  std::shared_ptr<const bool> alive = std::make_shared<const bool>(true);

  // The calling thread's read connection: a read pool worker's own inside a heavy handler,
  // else StoreAccess::reads() (the network thread's).
  store::Store& reads() const;
  // Unix seconds.
  int64_t now() const { return clock->UnixSeconds(); }
};

// An estimate (stored or planned) is served only up to this size; a normal one is 30-70 KB.
inline constexpr size_t kMaxEstimateBytes = 1u << 20;

// Lists take ?limit=1..kMaxLimit, kDefaultLimit when absent.
inline constexpr int64_t kDefaultLimit = 100;
inline constexpr int64_t kMaxLimit = 1000;

// Equal iff same length and bytes; the time depends on the lengths only (secrets, tokens).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// 500 {"error": "store: ..."} for a failed read or write.
HttpReply StoreFailure(const Error& error);
// 400 {"error": message}.
HttpReply BadRequest(const std::string& message);
// A filter that could not be applied: 400 when the request is at fault (InvalidInput), else
// StoreFailure.
HttpReply FilterFailure(const Error& error);

// {ns} and {name} -> "ns/name", validated by the Hub's rules (400 when invalid).
std::optional<HttpReply> RepoFromParams(const PathParams& params, std::string* repo);
// 404 unless the store tracks `repo`.
std::optional<HttpReply> RequireTrackedRepo(const ApiContext& ctx, const std::string& repo);
// A revision of `repo` named by 7 to 40 hex digits: 400 when not hex or ambiguous, 404 when
// unknown. `what` names the parameter in messages ("pin", "before").
std::optional<HttpReply> ResolveRevision(const ApiContext& ctx, const std::string& repo,
                                         const std::string& text, std::string_view what,
                                         std::string* sha);
// A change kind ("chat_template"); 400 listing the kinds when unknown.
std::optional<HttpReply> CheckKind(const std::string& kind);
// The most JSON values a JSON body of these routes may hold (an osv.dev batch of 1,000 queries
// holds ~7,000; a subscription or a repo a few dozen): 65,536 values parse in ~6 MB.
inline constexpr size_t kMaxBodyJsonValues = 65536;
// The request body as a JSON value: 400 when it is not JSON, nests deeper than kMaxJsonNesting
// or holds more than kMaxBodyJsonValues values (both refused before parsing).
std::optional<HttpReply> ParseJsonBody(const HttpRequest& request, nlohmann::json* out);
// A string at `pointer` in `j`, "" when absent or not a string.
std::string StringAt(const nlohmann::json& j, std::string_view pointer);
// "http://<Host>" for links in the feed; the listen address when Host is missing or odd.
std::string BaseUrl(const ApiContext& ctx, const HttpRequest& request);

// The "error" text of a JSON error reply ("" when it is not one).
std::string ErrorMessage(const HttpReply& reply);

// The estimator's input from POST /api/v1/plan's query (?seq, batch, context, lora_rank, cards,
// preset), shared with the /plan form.
Result<EstimateInput> PlanInputFromQuery(const QueryParams& query);

// JSON views of store records.
nlohmann::json RepoJson(const store::RepoRecord& repo);
// RepoJson with "pins": [{pin, revision, advisories, newest, current, problem}], each pin's
// standing (store::PinStatuses). Reads the store only for a repo that has pins.
Result<nlohmann::json> RepoWithPinsJson(store::Store& reads, const store::RepoRecord& repo);
nlohmann::json RevisionJson(const store::RevisionRecord& revision);
nlohmann::json ChangeJson(const store::ChangeRecord& change);
// Thin: id, seq, repo, revision, kind, impact, summary, published, modified, withdrawn.
nlohmann::json AdvisoryEntryJson(const store::AdvisoryRecord& advisory);
// {seq, kind, repo, rule, sha, reason, at (RFC 3339)}: a follow rule tracked or untracked a repo.
nlohmann::json FollowEventJson(const store::FollowEvent& event);

void RegisterRepoRoutes(Router& router, const ApiContext& ctx);
void RegisterDerivativeRoutes(Router& router, const ApiContext& ctx);
void RegisterBadgeRoutes(Router& router, const ApiContext& ctx);
void RegisterAdvisoryRoutes(Router& router, const ApiContext& ctx);
void RegisterOsvRoutes(Router& router, const ApiContext& ctx);
void RegisterPlanRoute(Router& router, const ApiContext& ctx);
void RegisterAdminRoutes(Router& router, const ApiContext& ctx);
void RegisterFollowRoutes(Router& router, const ApiContext& ctx);
// `handler` behind the admin token (401 without it, 403 wrong or not configured); with
// `needs_subscriptions`, 503 when the service has no subscriptions handler.
Handler Admin(const ApiContext& ctx, Handler handler, bool needs_subscriptions = false);
void RegisterServiceRoutes(Router& router, const ApiContext& ctx);
void RegisterHubWebhookRoute(Router& router, const ApiContext& ctx);
// The pages a person reads (routes_page*.cc): the model page and its twin, the index, /plan,
// /changes and the stylesheet.
void RegisterPageRoutes(Router& router, const ApiContext& ctx);
void RegisterPageListRoutes(Router& router, const ApiContext& ctx);
void RegisterPagePlanRoutes(Router& router, const ApiContext& ctx);

// Every route above, in one router.
Router BuildRouter(const ApiContext& ctx);

}  // namespace hubwatch::api
