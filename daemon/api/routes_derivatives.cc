// A tracked repo's derivatives: GET /api/v1/repos/{ns}/{name}/derivatives, each with where it
// stands on every upstream fix it was checked against, the counts by derivative, and the
// derivatives the rounds stopped following, with why.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/derivatives_json.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

void ListDerivatives(const ApiContext& ctx, const PathParams& params, Respond respond) {
  std::string repo;
  if (auto failed = RepoFromParams(params, &repo)) return respond(std::move(*failed));
  if (auto failed = RequireTrackedRepo(ctx, repo)) return respond(std::move(*failed));
  store::DerivativeStore& derivatives = ctx.reads().derivatives();
  Result<std::vector<derivatives::DerivativeRecord>> list = derivatives.List(repo);
  if (!list.ok()) return respond(StoreFailure(list.error()));
  Result<store::DerivativeTally> tally = derivatives.Tally(repo);
  if (!tally.ok()) return respond(StoreFailure(tally.error()));
  Result<std::vector<derivatives::Eviction>> evicted =
      derivatives.evictions().Recent(repo, store::DerivativeEvictions::kKept);
  if (!evicted.ok()) return respond(StoreFailure(evicted.error()));
  respond(HttpReply::Json(200, DerivativesJson(repo, *list, *tally, *evicted)));
}

}  // namespace

void RegisterDerivativeRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  // Heavy: a popular model has thousands of derivatives.
  router.Add({.method = "GET",
              .pattern = "/api/v1/repos/{ns}/{name}/derivatives",
              .handler = [c](const HttpRequest&, const PathParams& p,
                             Respond r) { ListDerivatives(*c, p, std::move(r)); },
              .heavy = true});
}

}  // namespace hubwatch::api
