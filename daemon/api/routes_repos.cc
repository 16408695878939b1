// Repository resources: GET /api/v1/repos, .../{ns}/{name}, revisions, one revision with its
// changes, changes, estimate. The lists are paged from keyset cursors (the last key shown:
// `after` a repo id or a change id, `before` a revision), never offsets, and each reply carries
// the next page's cursor while there is one.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/query_params.h"
#include "daemon/api/request_basis.h"
#include "daemon/page/href.h"
#include "daemon/page/page_data.h"
#include "estimator/report.h"
#include "tracker/advisory/time_text.h"
#include "tracker/store/since.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

constexpr const char kRepo[] = "/api/v1/repos/{ns}/{name}";

// The start of every .../{ns}/{name}/... handler: the repo id, checked and tracked.
std::optional<HttpReply> TrackedRepo(const ApiContext& ctx, const PathParams& params,
                                     std::string* repo) {
  if (auto failed = RepoFromParams(params, repo)) return failed;
  return RequireTrackedRepo(ctx, *repo);
}

std::optional<HttpReply> ParseQuery(const HttpRequest& request, QueryParams* out) {
  Result<QueryParams> q = QueryParams::Parse(request.query);
  if (!q.ok()) return BadRequest(q.error().message);
  *out = std::move(q).value();
  return std::nullopt;
}

std::optional<HttpReply> Limit(const QueryParams& query, int64_t* limit) {
  Result<std::optional<int64_t>> l = query.Int("limit", 1, kMaxLimit);
  if (!l.ok()) return BadRequest(l.error().message);
  *limit = l->value_or(kDefaultLimit);
  return std::nullopt;
}

// A list reply stops early rather than pass this many bytes of items (the next page starts
// after the last item it holds): a repo's refs and pins, or a change's diff, may be long.
constexpr size_t kMaxPageBytes = 256 * 1024;

// The items of one reply, within kMaxPageBytes (the first always fits).
class PageBudget {
 public:
  // Whether `item` still fits; counts it when it does.
  bool Fits(const nlohmann::json& item) {
    const size_t size = DumpJson(item).size() + 1;
    if (items_ > 0 && bytes_ + size > kMaxPageBytes) return false;
    bytes_ += size;
    ++items_;
    return true;
  }

 private:
  size_t bytes_ = 0;
  size_t items_ = 0;
};

// Repos a page at a time, by id: ?after=ID (the cursor) and ?limit=1..kMaxRepoPage; the reply
// names the next page (`next_after`, `next`) while there is one.
constexpr int64_t kMaxRepoPage = 100;

void ListRepos(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  QueryParams query;
  if (auto failed = ParseQuery(request, &query)) return respond(std::move(*failed));
  Result<std::optional<int64_t>> limit = query.Int("limit", 1, kMaxRepoPage);
  if (!limit.ok()) return respond(BadRequest(limit.error().message));
  const std::string after = query.Get("after").value_or("");
  if (after.size() > 200) return respond(BadRequest("after is longer than 200 bytes"));
  const int64_t page = limit->value_or(kMaxRepoPage);
  Result<std::vector<store::RepoKey>> keys =
      ctx.reads().repo_pages().Find({.after = after, .limit = page + 1});
  if (!keys.ok()) return respond(StoreFailure(keys.error()));
  bool more = static_cast<int64_t>(keys->size()) > page;
  if (more) keys->pop_back();
  nlohmann::json list = nlohmann::json::array();
  std::string last;
  PageBudget budget;
  for (const store::RepoKey& key : *keys) {
    Result<std::optional<store::RepoRecord>> r = ctx.reads().repos().GetRepo(key.id);
    if (!r.ok()) return respond(StoreFailure(r.error()));
    if (!r->has_value()) {  // removed since the page's query: still a cursor
      last = key.id;
      continue;
    }
    Result<nlohmann::json> j = RepoWithPinsJson(ctx.reads(), **r);
    if (!j.ok()) return respond(StoreFailure(j.error()));
    if (!budget.Fits(*j)) {
      more = true;
      break;
    }
    last = key.id;
    list.push_back(std::move(j).value());
  }
  nlohmann::json body = {{"repos", std::move(list)}};
  if (more) {
    body["next_after"] = last;
    body["next"] = "/api/v1/repos?after=" + page::QueryEscape(last) +
                   (limit->has_value() ? "&limit=" + std::to_string(page) : "");
  }
  respond(HttpReply::Json(200, body));
}

void GetRepo(const ApiContext& ctx, const PathParams& params, Respond respond) {
  std::string repo;
  if (auto failed = RepoFromParams(params, &repo)) return respond(std::move(*failed));
  Result<std::optional<store::RepoRecord>> r = ctx.reads().repos().GetRepo(repo);
  if (!r.ok()) return respond(StoreFailure(r.error()));
  if (!r->has_value()) return respond(HttpReply::Error(404, "repo " + repo + " is not tracked"));
  Result<std::optional<store::RevisionRecord>> latest =
      ctx.reads().revisions().LatestRevision(repo);
  if (!latest.ok()) return respond(StoreFailure(latest.error()));
  Result<nlohmann::json> with_pins = RepoWithPinsJson(ctx.reads(), **r);
  if (!with_pins.ok()) return respond(StoreFailure(with_pins.error()));
  nlohmann::json j = std::move(with_pins).value();
  j["latest_revision"] = latest->has_value() ? nlohmann::json((*latest)->sha) : nlohmann::json();
  respond(HttpReply::Json(200, j));
}

void ListRevisions(const ApiContext& ctx, const HttpRequest& request, const PathParams& params,
                   Respond respond) {
  std::string repo, before;
  QueryParams query;
  int64_t limit = 0;
  if (auto failed = TrackedRepo(ctx, params, &repo)) return respond(std::move(*failed));
  if (auto failed = ParseQuery(request, &query)) return respond(std::move(*failed));
  if (auto failed = Limit(query, &limit)) return respond(std::move(*failed));
  if (std::optional<std::string> b = query.Get("before")) {
    if (auto failed = ResolveRevision(ctx, repo, *b, "before", &before)) {
      return respond(std::move(*failed));
    }
  }
  Result<std::vector<store::RevisionRecord>> revs =
      ctx.reads().revisions().ListRevisions(repo, limit + 1, before);
  if (!revs.ok()) return respond(StoreFailure(revs.error()));
  const bool more = static_cast<int64_t>(revs->size()) > limit;
  if (more) revs->resize(static_cast<size_t>(limit));
  nlohmann::json list = nlohmann::json::array();
  for (const store::RevisionRecord& r : *revs) list.push_back(RevisionJson(r));
  nlohmann::json body = {{"repo", repo}, {"revisions", std::move(list)}};
  // The cursor for the next page: ?before=<the last sha of this one>.
  if (more) body["next_before"] = revs->back().sha;
  respond(HttpReply::Json(200, body));
}

void GetRevision(const ApiContext& ctx, const PathParams& params, Respond respond) {
  std::string repo, sha;
  if (auto failed = TrackedRepo(ctx, params, &repo)) return respond(std::move(*failed));
  if (auto failed = ResolveRevision(ctx, repo, params.at("sha"), "sha", &sha)) {
    return respond(std::move(*failed));
  }
  Result<std::optional<store::RevisionRecord>> rev = ctx.reads().revisions().GetRevision(repo, sha);
  if (!rev.ok()) return respond(StoreFailure(rev.error()));
  if (!rev->has_value()) return respond(HttpReply::Error(404, "revision " + sha + " vanished"));
  Result<std::vector<store::ChangeRecord>> changes = ctx.reads().revisions().ChangesOf(repo, sha);
  if (!changes.ok()) return respond(StoreFailure(changes.error()));
  nlohmann::json j = RevisionJson(**rev);
  j["repo"] = repo;
  j["changes"] = nlohmann::json::array();
  for (const store::ChangeRecord& c : *changes) j["changes"].push_back(ChangeJson(c));
  respond(HttpReply::Json(200, j));
}

// ?since= a revision or a commit time (store/since.h); ?recorded_since= a time hubwatch
// recorded the change at or after; ?after= a change id, the cursor (`next_after` of the page
// before, which is given while `truncated`).
void ListChanges(const ApiContext& ctx, const HttpRequest& request, const PathParams& params,
                 Respond respond) {
  std::string repo;
  QueryParams query;
  int64_t limit = 0;
  if (auto failed = TrackedRepo(ctx, params, &repo)) return respond(std::move(*failed));
  if (auto failed = ParseQuery(request, &query)) return respond(std::move(*failed));
  if (auto failed = Limit(query, &limit)) return respond(std::move(*failed));
  store::Query q{.repo = repo, .kind = query.Get("kind").value_or(""), .limit = limit + 1};
  if (!q.kind.empty()) {
    if (auto failed = CheckKind(q.kind)) return respond(std::move(*failed));
  }
  if (std::optional<std::string> since = query.Get("since")) {
    if (Status s = store::ApplySince(ctx.reads(), repo, *since, q); !s.ok()) {
      return respond(FilterFailure(s.error()));
    }
  }
  if (std::optional<std::string> recorded = query.Get("recorded_since")) {
    std::optional<int64_t> t = store::ParseSinceTime(*recorded);
    if (!t) return respond(BadRequest("recorded_since must be a time (RFC 3339 or YYYY-MM-DD)"));
    q.recorded_since = *t;
  }
  Result<std::optional<int64_t>> after = query.Int("after", 0, INT64_MAX);
  if (!after.ok()) return respond(BadRequest(after.error().message));
  Result<std::vector<int64_t>> ids = ctx.reads().change_pages().OfRepo(q, after->value_or(0));
  if (!ids.ok()) return respond(StoreFailure(ids.error()));
  bool truncated = static_cast<int64_t>(ids->size()) > limit;
  if (truncated) ids->resize(static_cast<size_t>(limit));
  nlohmann::json list = nlohmann::json::array();
  int64_t last = 0;
  PageBudget budget;
  for (const int64_t id : *ids) {
    Result<std::optional<store::ChangeRecord>> c = ctx.reads().revisions().GetChange(id);
    if (!c.ok()) return respond(StoreFailure(c.error()));
    if (!c->has_value()) {  // its repo removed since the page's query: still a cursor
      last = id;
      continue;
    }
    nlohmann::json j = ChangeJson(**c);
    if (!budget.Fits(j)) {
      truncated = true;
      break;
    }
    last = id;
    list.push_back(std::move(j));
  }
  nlohmann::json body = {{"repo", repo}, {"changes", std::move(list)}, {"truncated", truncated}};
  if (truncated) body["next_after"] = last;
  if (!q.after_revision.empty()) body["since_revision"] = q.after_revision;
  respond(HttpReply::Json(200, body));
}

// Whether the query sets any of the workload knobs PlanInputFromQuery reads.
bool HasWorkload(const QueryParams& query) {
  for (const char* knob :
       {"seq", "batch", "serving_batch", "context", "lora_rank", "cards", "preset"}) {
    if (query.Get(knob)) return true;
  }
  return false;
}

void GetEstimate(const ApiContext& ctx, const HttpRequest& request, const PathParams& params,
                 Respond respond) {
  std::string repo, sha;
  QueryParams query;
  if (auto failed = TrackedRepo(ctx, params, &repo)) return respond(std::move(*failed));
  if (auto failed = ParseQuery(request, &query)) return respond(std::move(*failed));
  Result<std::optional<store::EstimateRecord>> e = std::optional<store::EstimateRecord>();
  if (std::optional<std::string> revision = query.Get("revision")) {
    if (auto failed = ResolveRevision(ctx, repo, *revision, "revision", &sha)) {
      return respond(std::move(*failed));
    }
    e = ctx.reads().revisions().GetEstimate(repo, sha);
  } else {
    e = ctx.reads().revisions().LatestEstimate(repo);
  }
  if (!e.ok()) return respond(StoreFailure(e.error()));
  if (!e->has_value()) {
    return respond(HttpReply::Error(
        404, sha.empty() ? "no estimate for " + repo + " yet" : "no estimate for revision " + sha));
  }
  const store::EstimateRecord& r = **e;
  // The user's own workload (seq, batch, context, lora_rank, cards, preset, as POST /api/v1/plan
  // takes them): the revision's basis (its stored config and headers, prepared once:
  // request_basis.h) finished for that workload.
  if (HasWorkload(query)) {
    Result<EstimateInput> input = PlanInputFromQuery(query);
    if (!input.ok()) return respond(BadRequest(input.error().message));
    Result<RequestBasis> basis = LookUpBasis(ctx, ctx.reads(), repo, r.sha);
    if (!basis.ok()) return respond(StoreFailure(basis.error()));
    if (!basis->basis) {
      HttpReply reply = HttpReply::Error(503, PreparingMessage(*basis, repo, r.sha));
      reply.headers.push_back({"Retry-After", basis->busy ? "30" : "2"});
      return respond(std::move(reply));
    }
    const page::RevisionEstimate again = page::FinishRevision(*basis->basis, *input);
    if (!again.estimate) return respond(HttpReply::Error(422, again.unavailable));
    const Estimate& fresh = *again.estimate;
    nlohmann::json body = {
        {"repo", repo},
        {"revision", r.sha},
        {"params_total", fresh.params.total},
        {"params_active", fresh.params.active},
        {"kv_bytes_per_token", fresh.kv.bytes_per_token},
        {"parameter_delta",
         fresh.checkpoint ? nlohmann::json(fresh.checkpoint->parameter_delta) : nlohmann::json()},
        {"estimate", EstimateToJson(fresh)}};
    return respond(HttpReply::Json(200, body));
  }
  // An estimate stored before estimates were capped could be hundreds of MB: refused whole.
  size_t size = 0;
  if (!DumpJsonWithin(r.estimate, kMaxEstimateBytes, &size)) {
    return respond(HttpReply::TooLarge("the estimate of " + repo + "@" + r.sha.substr(0, 12), size,
                                       kMaxEstimateBytes));
  }
  nlohmann::json body = {{"repo", repo},
                         {"revision", r.sha},
                         {"params_total", r.params_total},
                         {"params_active", r.params_active},
                         {"kv_bytes_per_token", r.kv_bytes_per_token},
                         {"parameter_delta", r.parameter_delta ? nlohmann::json(*r.parameter_delta)
                                                               : nlohmann::json()},
                         {"estimate", r.estimate}};
  respond(HttpReply::Json(200, body));
}

}  // namespace

void RegisterRepoRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  const std::string repo = kRepo;
  router.Add({"GET", "/api/v1/repos",
              [c](const HttpRequest& q, const PathParams&, Respond r) { ListRepos(*c, q, r); }});
  router.Add({"GET", repo,
              [c](const HttpRequest&, const PathParams& p, Respond r) { GetRepo(*c, p, r); }});
  router.Add(
      {"GET", repo + "/revisions",
       [c](const HttpRequest& q, const PathParams& p, Respond r) { ListRevisions(*c, q, p, r); }});
  router.Add({"GET", repo + "/revisions/{sha}",
              [c](const HttpRequest&, const PathParams& p, Respond r) { GetRevision(*c, p, r); }});
  router.Add({.method = "GET",
              .pattern = repo + "/changes",
              .handler = [c](const HttpRequest& q, const PathParams& p,
                             Respond r) { ListChanges(*c, q, p, r); },
              .heavy = true});
  router.Add({.method = "GET",
              .pattern = repo + "/estimate",
              .handler = [c](const HttpRequest& q, const PathParams& p,
                             Respond r) { GetEstimate(*c, q, p, r); },
              .heavy = true});
}

}  // namespace hubwatch::api
