// Follow rules through the admin API (behind the admin token, like POST /api/v1/repos):
//   POST   /api/v1/follows {"owner": "Qwen", ...}  201 created, 200 replaced (a rule of the
//          same name from the API); 409 when the configuration has a rule of that name
//   GET    /api/v1/follows                         every rule: its spec, source, the repos it
//          brought (tracked, untracked), its last walk, matches skipped over a cap and what its
//          listing costs
//   DELETE /api/v1/follows/{name}                  200 {"untracked": [...]}: the repos it
//          brought are untracked, their history kept; 404 unknown, 409 a configuration rule
// The rule's keys are config::ParseFollowRule's (the configuration's "follow" entries). Names
// may hold '/': DELETE takes it percent-encoded ("Qwen%2FQwen3*").

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/service_control.h"
#include "daemon/config/follow_rule.h"
#include "daemon/service/store_access.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

nlohmann::json FollowJson(const ApiContext& ctx, const store::FollowRuleRecord& r) {
  nlohmann::json spec = nlohmann::json::parse(r.spec, nullptr, false);
  nlohmann::json j = {{"name", r.name},
                      {"source", store::SourceName(r.source)},
                      {"rule", spec.is_discarded() ? nlohmann::json() : spec},
                      {"tracked", r.tracked},
                      {"untracked", r.untracked},
                      {"created_at", r.created_at},
                      {"walked_at", r.walked_at ? nlohmann::json(r.walked_at) : nlohmann::json()}};
  const FollowRuntime runtime =
      ctx.control ? ctx.control->follow_runtime(r.name) : FollowRuntime{};
  j["capped"] = runtime.capped;
  const bool has_owner = spec.is_object() && spec.contains("owner");
  // A round reads the owner's listing (one request) or the Hub-wide feed (shared); a rule
  // without an owner is found by its walks only.
  std::string listing = !has_owner ? "walks only" : runtime.listing_mode;
  j["listing"] = {{"mode", listing.empty() ? nlohmann::json() : nlohmann::json(listing)},
                  {"requests_per_round",
                   has_owner && runtime.listing_mode == "owners" ? 1 : 0},
                  {"walk_requests", runtime.walk_requests}};
  return j;
}

void AddFollow(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  nlohmann::json body;
  if (auto failed = ParseJsonBody(request, &body)) return respond(std::move(*failed));
  Result<config::FollowRule> rule = config::ParseFollowRule(body, "the rule");
  if (!rule.ok()) return respond(BadRequest(rule.error().message));
  Result<std::optional<store::FollowRuleRecord>> existing =
      ctx.reads().follows().GetRule(rule->name);
  if (!existing.ok()) return respond(StoreFailure(existing.error()));
  if (*existing && (*existing)->source == store::Source::kConfig) {
    return respond(HttpReply::Error(
        409, "the configuration has a follow rule named \"" + rule->name +
                 "\"; give this one another \"name\""));
  }
  const bool created = !existing->has_value();
  const store::FollowRuleRecord record{.name = rule->name,
                                       .source = store::Source::kApi,
                                       .spec = config::FollowRuleJson(*rule).dump(),
                                       .created_at = ctx.now()};
  const ApiContext* c = &ctx;
  ctx.store->Write(
      [record](store::Store& w) { return w.follows().PutRule(record); },
      [c, alive = ctx.alive, name = record.name, created, respond = std::move(respond)](Status s) {
        if (!*alive) return;
        if (!s.ok()) {
          return respond(s.error().code == ErrorCode::kInvalidInput
                             ? HttpReply::Error(409, s.error().message)
                             : StoreFailure(s.error()));
        }
        if (c->control) c->control->FollowRulesChanged({});
        Result<std::optional<store::FollowRuleRecord>> r = c->reads().follows().GetRule(name);
        if (!r.ok()) return respond(StoreFailure(r.error()));
        if (!r->has_value()) return respond(HttpReply::Error(409, name + " vanished"));
        respond(HttpReply::Json(created ? 201 : 200, FollowJson(*c, **r)));
      });
}

void ListFollows(const ApiContext& ctx, Respond respond) {
  Result<std::vector<store::FollowRuleRecord>> rules = ctx.reads().follows().ListRules();
  if (!rules.ok()) return respond(StoreFailure(rules.error()));
  nlohmann::json list = nlohmann::json::array();
  int64_t tracked = 0;
  for (const store::FollowRuleRecord& r : *rules) {
    list.push_back(FollowJson(ctx, r));
    tracked += r.tracked;
  }
  respond(HttpReply::Json(200, {{"follows", std::move(list)}, {"tracked", tracked}}));
}

void RemoveFollow(const ApiContext& ctx, const std::string& name, Respond respond) {
  Result<std::optional<store::FollowRuleRecord>> existing = ctx.reads().follows().GetRule(name);
  if (!existing.ok()) return respond(StoreFailure(existing.error()));
  if (!*existing) return respond(HttpReply::Error(404, "no follow rule is named that"));
  if ((*existing)->source == store::Source::kConfig) {
    return respond(HttpReply::Error(
        409, "this follow rule comes from the configuration: remove it there and reload"));
  }
  auto untracked = std::make_shared<std::vector<std::string>>();
  const ApiContext* c = &ctx;
  store::FollowTargets targets = ctx.control ? ctx.control->follow_targets() : nullptr;
  ctx.store->Write(
      [name, untracked, now = ctx.now(), targets](store::Store& w) -> Status {
        Result<std::vector<std::string>> r = w.follows().RemoveRule(name, now, targets);
        if (!r.ok()) return r.error();
        *untracked = std::move(r).value();
        return Status::Ok();
      },
      [c, alive = ctx.alive, untracked, respond = std::move(respond)](Status s) {
        if (!*alive) return;
        if (!s.ok()) return respond(StoreFailure(s.error()));
        if (c->control) c->control->FollowRulesChanged(*untracked);
        respond(HttpReply::Json(200, {{"untracked", *untracked}}));
      });
}

}  // namespace

void RegisterFollowRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add({"POST", "/api/v1/follows",
              Admin(ctx, [c](const HttpRequest& request, const PathParams&, Respond respond) {
                AddFollow(*c, request, std::move(respond));
              })});
  router.Add({"GET", "/api/v1/follows",
              Admin(ctx, [c](const HttpRequest&, const PathParams&, Respond respond) {
                ListFollows(*c, std::move(respond));
              })});
  router.Add({"DELETE", "/api/v1/follows/{name}",
              Admin(ctx, [c](const HttpRequest&, const PathParams& params, Respond respond) {
                RemoveFollow(*c, params.at("name"), std::move(respond));
              })});
}

}  // namespace hubwatch::api
