// Repository resources: GET /api/v1/repos, .../{ns}/{name}, revisions, one revision with its
// changes, changes, estimate.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/query_params.h"
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

void ListRepos(const ApiContext& ctx, Respond respond) {
  Result<std::vector<store::RepoRecord>> repos = ctx.reads().repos().ListRepos();
  if (!repos.ok()) return respond(StoreFailure(repos.error()));
  nlohmann::json list = nlohmann::json::array();
  for (const store::RepoRecord& r : *repos) {
    Result<nlohmann::json> j = RepoWithPinsJson(ctx.reads(), r);
    if (!j.ok()) return respond(StoreFailure(j.error()));
    list.push_back(std::move(j).value());
  }
  respond(HttpReply::Json(200, {{"repos", std::move(list)}}));
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
// recorded the change at or after.
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
  Result<std::vector<store::ChangeRecord>> changes = ctx.reads().revisions().ListChanges(q);
  if (!changes.ok()) return respond(StoreFailure(changes.error()));
  const bool truncated = static_cast<int64_t>(changes->size()) > limit;
  if (truncated) changes->resize(static_cast<size_t>(limit));
  nlohmann::json list = nlohmann::json::array();
  for (const store::ChangeRecord& c : *changes) list.push_back(ChangeJson(c));
  nlohmann::json body = {{"repo", repo}, {"changes", std::move(list)}, {"truncated", truncated}};
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
  // takes them): the revision estimated again from its stored config and headers.
  if (HasWorkload(query)) {
    Result<EstimateInput> input = PlanInputFromQuery(query);
    if (!input.ok()) return respond(BadRequest(input.error().message));
    Result<page::RevisionEstimate> again = page::EstimateRevision(ctx.reads(), repo, r.sha, *input);
    if (!again.ok()) return respond(StoreFailure(again.error()));
    if (!again->estimate) return respond(HttpReply::Error(422, again->unavailable));
    const Estimate& fresh = *again->estimate;
    nlohmann::json body = {{"repo", repo},
                           {"revision", r.sha},
                           {"params_total", fresh.params.total},
                           {"params_active", fresh.params.active},
                           {"kv_bytes_per_token", fresh.kv.bytes_per_token},
                           {"parameter_delta", fresh.checkpoint
                                                   ? nlohmann::json(fresh.checkpoint->parameter_delta)
                                                   : nlohmann::json()},
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
              [c](const HttpRequest&, const PathParams&, Respond r) { ListRepos(*c, r); }});
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
