// Admin endpoints, behind "Authorization: Bearer <admin token>" (401 without, 403 wrong or when
// no admin_token_file is configured):
//   POST   /api/v1/repos {"id": "ns/name", "refs": ["main"]}   201 added, 200 refs updated
//   DELETE /api/v1/repos/{ns}/{name}                           204, 404 when not tracked
//   POST|GET /api/v1/subscriptions, DELETE /api/v1/subscriptions/{id}  (SubscriptionsHandler)
// Writes go through StoreAccess::Write; the reply follows the commit.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/subscriptions_handler.h"
#include "daemon/api/service_control.h"
#include "daemon/service/store_access.h"
#include "tracker/hub/repo_id.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

std::optional<HttpReply> CheckAdmin(const ApiContext& ctx, const HttpRequest& request) {
  std::optional<std::string_view> auth = request.header("authorization");
  constexpr std::string_view kScheme = "bearer ";
  std::string scheme(auth.value_or("").substr(0, kScheme.size()));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!auth || scheme != kScheme) {
    HttpReply reply =
        HttpReply::Error(401, "this endpoint needs Authorization: Bearer <admin token>");
    reply.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"hubwatch admin\"");
    return reply;
  }
  if (!ctx.admin_token || ctx.admin_token->empty()) {
    return HttpReply::Error(403, "admin endpoints are disabled: no admin_token_file is configured");
  }
  std::string_view token = auth->substr(kScheme.size());
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (!ConstantTimeEquals(token, *ctx.admin_token)) {
    return HttpReply::Error(403, "wrong admin token");
  }
  return std::nullopt;
}

// A ref name as the configuration checks it (hub::ValidateRefName: one rule for both).
std::optional<HttpReply> CheckRef(const nlohmann::json& ref) {
  if (!ref.is_string()) return BadRequest("refs must be strings");
  if (Status s = hub::ValidateRefName(ref.get_ref<const std::string&>()); !s.ok()) {
    return BadRequest(s.error().message);
  }
  return std::nullopt;
}

void AddRepo(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  nlohmann::json body;
  if (auto failed = ParseJsonBody(request, &body)) return respond(std::move(*failed));
  if (!body.is_object()) return respond(BadRequest("the body must be {\"id\": \"ns/name\"}"));
  for (const auto& [key, value] : body.items()) {
    if (key != "id" && key != "refs" && key != "pins") {
      return respond(BadRequest("unknown key '" + key + "'"));
    }
  }
  if (!body.contains("id") || !body["id"].is_string()) {
    return respond(BadRequest("id must be a string: \"ns/name\""));
  }
  store::RepoRecord repo;
  repo.id = body["id"].get<std::string>();
  if (Status s = hub::ValidateRepoId(repo.id); !s.ok()) {
    return respond(BadRequest(s.error().message));
  }
  if (repo.id.find('/') == std::string::npos) {
    return respond(BadRequest("id must name a namespace too: \"ns/name\""));
  }
  repo.refs = {"main"};
  if (body.contains("refs")) {
    const nlohmann::json& refs = body["refs"];
    if (!refs.is_array() || refs.empty() || refs.size() > hub::kMaxTrackedRefs) {
      return respond(BadRequest("refs must be a list of 1 to " +
                                std::to_string(hub::kMaxTrackedRefs) + " ref names"));
    }
    repo.refs.clear();
    for (const nlohmann::json& ref : refs) {
      if (auto failed = CheckRef(ref)) return respond(std::move(*failed));
      repo.refs.push_back(ref.get<std::string>());
    }
  }
  if (body.contains("pins")) {
    const nlohmann::json& pins = body["pins"];
    if (!pins.is_array() || pins.size() > hub::kMaxPins) {
      return respond(BadRequest("pins must be a list of at most " + std::to_string(hub::kMaxPins) +
                                " revisions (7-40 hex digits each)"));
    }
    for (const nlohmann::json& pin : pins) {
      if (!pin.is_string()) return respond(BadRequest("pins must be a list of strings"));
      if (Status s = hub::ValidatePin(pin.get<std::string>()); !s.ok()) {
        return respond(BadRequest(s.error().message));
      }
      repo.pins.push_back(pin.get<std::string>());
    }
  }
  Result<std::optional<store::RepoRecord>> existing = ctx.reads().repos().GetRepo(repo.id);
  if (!existing.ok()) return respond(StoreFailure(existing.error()));
  const bool created = !existing->has_value();
  if (created) {  // the same repo in other letters would be tracked twice
    Result<std::optional<std::string>> other = ctx.reads().repos().FindIdIgnoringCase(repo.id);
    if (!other.ok()) return respond(StoreFailure(other.error()));
    if (*other) {
      return respond(HttpReply::Error(
          409, repo.id + " is " + **other +
                   ", already tracked: the Hub matches repo ids without regard to letter case"));
    }
  }
  repo.added_at = ctx.now();
  repo.next_poll_at = repo.added_at;
  const ApiContext* c = &ctx;
  ctx.store->Write(
      [repo](store::Store& writer) { return writer.repos().AddRepo(repo); },
      [c, alive = ctx.alive, id = repo.id, created, respond = std::move(respond)](Status s) {
        if (!*alive) return;
        if (!s.ok()) return respond(StoreFailure(s.error()));
        if (c->control) c->control->RepoAdded(id);
        Result<std::optional<store::RepoRecord>> r = c->reads().repos().GetRepo(id);
        if (!r.ok()) return respond(StoreFailure(r.error()));
        if (!r->has_value()) return respond(HttpReply::Error(409, id + " vanished"));
        Result<nlohmann::json> j = RepoWithPinsJson(c->reads(), **r);
        if (!j.ok()) return respond(StoreFailure(j.error()));
        respond(HttpReply::Json(created ? 201 : 200, *j));
      });
}

void RemoveRepo(const ApiContext& ctx, const PathParams& params, Respond respond) {
  std::string repo;
  if (auto failed = RepoFromParams(params, &repo)) return respond(std::move(*failed));
  if (auto failed = RequireTrackedRepo(ctx, repo)) return respond(std::move(*failed));
  const ApiContext* c = &ctx;
  ctx.store->Write([repo](store::Store& writer) { return writer.repos().RemoveRepo(repo); },
                   [c, alive = ctx.alive, repo, respond = std::move(respond)](Status s) {
                     if (!*alive) return;
                     if (!s.ok()) return respond(StoreFailure(s.error()));
                     if (c->control) c->control->RepoRemoved(repo);
                     HttpReply reply;
                     reply.status = 204;
                     respond(std::move(reply));
                   });
}

}  // namespace

// Admin check, then the handler, or 503 without one.
Handler Admin(const ApiContext& ctx, Handler handler, bool needs_subscriptions) {
  const ApiContext* c = &ctx;
  return [c, handler = std::move(handler), needs_subscriptions](
             const HttpRequest& request, const PathParams& params, Respond respond) {
    if (auto failed = CheckAdmin(*c, request)) return respond(std::move(*failed));
    if (needs_subscriptions && !c->subscriptions) {
      return respond(HttpReply::Error(503, "subscriptions are not configured"));
    }
    handler(request, params, std::move(respond));
  };
}

void RegisterAdminRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add({"POST", "/api/v1/repos",
              Admin(
                  ctx,
                  [c](const HttpRequest& request, const PathParams&, Respond respond) {
                    AddRepo(*c, request, std::move(respond));
                  },
                  false)});
  router.Add({"DELETE", "/api/v1/repos/{ns}/{name}",
              Admin(
                  ctx,
                  [c](const HttpRequest&, const PathParams& params, Respond respond) {
                    RemoveRepo(*c, params, std::move(respond));
                  },
                  false)});
  router.Add({"POST", "/api/v1/subscriptions",
              Admin(
                  ctx,
                  [c](const HttpRequest& request, const PathParams&, Respond respond) {
                    nlohmann::json body;
                    if (auto failed = ParseJsonBody(request, &body)) {
                      return respond(std::move(*failed));
                    }
                    if (!body.is_object()) {
                      return respond(BadRequest("a subscription must be a JSON object"));
                    }
                    c->subscriptions->Create(body, std::move(respond));
                  },
                  true)});
  router.Add({"GET", "/api/v1/subscriptions",
              Admin(
                  ctx,
                  [c](const HttpRequest&, const PathParams&, Respond respond) {
                    c->subscriptions->List(std::move(respond));
                  },
                  true)});
  router.Add({"DELETE", "/api/v1/subscriptions/{id}",
              Admin(
                  ctx,
                  [c](const HttpRequest&, const PathParams& params, Respond respond) {
                    c->subscriptions->Remove(params.at("id"), std::move(respond));
                  },
                  true)});
}

}  // namespace hubwatch::api
