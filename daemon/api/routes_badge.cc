// Badges: GET /api/v1/repos/{ns}/{name}/badge (shields endpoint JSON) and .../badge.svg.
//   ?pin=SHA   count the changes since that revision ("3 changes since 1a2b3c4")
//   ?pins      the repo's configured pins: "2 advisories affect 1a2b3c4" for the most affected
//   ?kind=K    only changes of that kind; without a pin: "chat template changed 2 days ago"
//   ?derivatives=lagging  how many of the repo's derivatives lag an upstream fix ("3 of 40
//              lagging"); not with pin or kind
//   ?label=L   the left-hand text (default "hubwatch"; at most 64 characters)

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/badge.h"
#include "daemon/api/query_params.h"
#include "tracker/advisory/time_text.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

constexpr size_t kMaxLabel = 64;

// The badge, or the reply to send instead.
std::optional<HttpReply> ComputeBadge(const ApiContext& ctx, const HttpRequest& request,
                                      const PathParams& params, Badge* badge) {
  std::string repo;
  if (auto failed = RepoFromParams(params, &repo)) return failed;
  Result<QueryParams> query = QueryParams::Parse(request.query);
  if (!query.ok()) return BadRequest(query.error().message);
  if (auto failed = RequireTrackedRepo(ctx, repo)) return failed;
  const std::string kind = query->Get("kind").value_or("");
  if (!kind.empty()) {
    if (auto failed = CheckKind(kind)) return failed;
  }
  if (std::optional<std::string> derivatives = query->Get("derivatives")) {
    if (*derivatives != "lagging") return BadRequest("derivatives must be 'lagging'");
    if (query->Get("pin") || !kind.empty()) {
      return BadRequest("derivatives=lagging cannot be combined with pin or kind");
    }
    Result<store::DerivativeTally> tally = ctx.reads().derivatives().Tally(repo);
    if (!tally.ok()) return StoreFailure(tally.error());
    *badge = DerivativesBadge(*tally);
  } else if (query->Get("pins")) {
    if (query->Get("pin") || !kind.empty()) {
      return BadRequest("pins cannot be combined with pin or kind");
    }
    Result<std::optional<store::RepoRecord>> record = ctx.reads().repos().GetRepo(repo);
    if (!record.ok()) return StoreFailure(record.error());
    if (!record->has_value()) return HttpReply::Error(404, "repo " + repo + " is not tracked");
    Result<std::vector<store::PinStatus>> pins = store::PinStatuses(ctx.reads(), **record);
    if (!pins.ok()) return StoreFailure(pins.error());
    *badge = PinsBadge(*pins);
  } else if (std::optional<std::string> pin = query->Get("pin")) {
    std::string sha;
    if (auto failed = ResolveRevision(ctx, repo, *pin, "pin", &sha)) return failed;
    Result<store::ChangeTally> tally = ctx.reads().queries().TallyChangesAfter(repo, sha, kind);
    if (!tally.ok()) return StoreFailure(tally.error());
    *badge = PinBadge(sha, *tally, kind);
  } else {
    Result<std::optional<store::LastChange>> last = ctx.reads().queries().LatestChange(repo, kind);
    if (!last.ok()) return StoreFailure(last.error());
    std::optional<int64_t> changed_at;
    if (last->has_value()) {
      changed_at = advisory::ParseTime((*last)->authored_at);
      if (!changed_at) changed_at = (*last)->first_seen_at;
    }
    *badge = LastChangeBadge(kind, changed_at, ctx.now());
  }
  if (std::optional<std::string> label = query->Get("label")) {
    if (label->size() > kMaxLabel) {
      return BadRequest("label is longer than " + std::to_string(kMaxLabel) + " characters");
    }
    badge->label = *label;
  }
  return std::nullopt;
}

HttpReply WithCaching(HttpReply reply) {
  reply.headers.emplace_back("Cache-Control",
                             "public, max-age=" + std::to_string(kBadgeCacheSeconds));
  return reply;
}

}  // namespace

void RegisterBadgeRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add({"GET", "/api/v1/repos/{ns}/{name}/badge",
              [c](const HttpRequest& request, const PathParams& params, Respond respond) {
                Badge badge;
                if (auto failed = ComputeBadge(*c, request, params, &badge)) {
                  return respond(std::move(*failed));
                }
                respond(WithCaching(HttpReply::Json(200, BadgeToShieldsJson(badge))));
              }});
  router.Add({"GET", "/api/v1/repos/{ns}/{name}/badge.svg",
              [c](const HttpRequest& request, const PathParams& params, Respond respond) {
                Badge badge;
                if (auto failed = ComputeBadge(*c, request, params, &badge)) {
                  return respond(std::move(*failed));
                }
                HttpReply reply;
                reply.content_type = "image/svg+xml; charset=utf-8";
                reply.body = RenderBadgeSvg(badge);
                respond(WithCaching(std::move(reply)));
              }});
}

}  // namespace hubwatch::api
