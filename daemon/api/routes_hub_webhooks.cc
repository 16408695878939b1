// POST /api/v1/hub-webhooks: the Hub's webhooks (https://huggingface.co/docs/hub/webhooks,
// payload version 3) as change hints. The payload is a hint, never data: an event about a
// tracked model repo queues a refs poll at once and the reply does not wait for it.
//   404  no hub.webhook_secret_file is configured (no webhook is expected)
//   401  no X-Webhook-Secret header; 403 a wrong one (compared in constant time)
//   429  more than kBurst events at once or kPerSecond a second on average (Retry-After: 1)
//   400  a body that is not a JSON object, or an event without a scope or a repo name
//   202  {"repo", "poll": ...}: a repo or repo.* event (content, config, move, delete, and
//        narrower scopes the Hub may add) about a tracked model repo; a move also hints the
//        repo's new name when that one is tracked. "poll" says what the scheduler did with it
//        (schedule/scheduler.h: webhooks get a share of the budget and a per-repo gap):
//        "queued" (now), "already queued" (merged into a poll queued or due), "deferred" (queued
//        for the end of the repo's webhook gap: a webhook poll of it started lately) or
//        "dropped" (the webhooks' share of the budget is spent; the listing covers it)
//   204  anything else: discussions, other repo types, repos we do not track
// Metrics: hubwatch_hub_webhooks_total{outcome} (outcome: not_configured, unauthorized,
// forbidden, rate_limited, bad_request, ignored, untracked, queued, duplicate, deferred,
// dropped), hubwatch_hints_received_total{source="webhook"}.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/service/metrics.h"
#include "daemon/api/service_control.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::api {
namespace {

constexpr double kPerSecond = 20;
constexpr double kBurst = 200;
constexpr uint64_t kMaxBodyBytes = 1 << 20;  // discussion events carry comment text

// A token bucket over the server's steady clock. Network thread only.
struct RateLimit {
  double tokens = kBurst;
  SteadyTime refilled{};
  bool started = false;

  bool Take(SteadyTime now) {
    if (started) {
      const double elapsed = std::chrono::duration<double>(now - refilled).count();
      tokens = std::min(kBurst, tokens + elapsed * kPerSecond);
    }
    started = true;
    refilled = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
};

void Count(const ApiContext& ctx, const char* outcome) {
  ctx.metrics
      ->counter("hubwatch_hub_webhooks_total", "Hub webhook requests by outcome",
                {{"outcome", outcome}})
      .Add();
}

// How soon a hint's outcome polls: the lowest wins when an event names two repos.
int Rank(schedule::Scheduler::HintOutcome outcome) {
  using Outcome = schedule::Scheduler::HintOutcome;
  switch (outcome) {
    case Outcome::kQueued:
      return 0;
    case Outcome::kAlreadyQueued:
      return 1;
    case Outcome::kDeferred:
      return 2;
    case Outcome::kDropped:
      return 3;
    case Outcome::kUntracked:
      break;
  }
  return 4;
}

// The metric's outcome label and the reply's "poll" for a tracked repo's hint.
std::pair<const char*, const char*> Described(schedule::Scheduler::HintOutcome outcome) {
  using Outcome = schedule::Scheduler::HintOutcome;
  switch (outcome) {
    case Outcome::kQueued:
      return {"queued", "queued"};
    case Outcome::kDeferred:
      return {"deferred", "deferred"};
    case Outcome::kDropped:
      return {"dropped", "dropped"};
    case Outcome::kAlreadyQueued:
    case Outcome::kUntracked:
      break;
  }
  return {"duplicate", "already queued"};
}

// The ids a repo-scoped event names: the repo, and for a move its new name.
std::vector<std::string> NamedRepos(const nlohmann::json& body) {
  std::vector<std::string> ids = {StringAt(body, "/repo/name")};
  if (std::string moved = StringAt(body, "/movedTo/name"); !moved.empty()) ids.push_back(moved);
  return ids;
}

HttpReply Handle(const ApiContext& ctx, RateLimit& limit, const HttpRequest& request) {
  if (!ctx.hub_webhook_secret) {
    Count(ctx, "not_configured");
    return HttpReply::Error(404, "no Hub webhook is expected: hub.webhook_secret_file is not set");
  }
  const std::optional<std::string_view> secret = request.header("x-webhook-secret");
  if (!secret) {
    Count(ctx, "unauthorized");
    return HttpReply::Error(401, "a Hub webhook carries its secret in X-Webhook-Secret");
  }
  if (!ConstantTimeEquals(*secret, *ctx.hub_webhook_secret)) {
    Count(ctx, "forbidden");
    return HttpReply::Error(403, "wrong X-Webhook-Secret");
  }
  if (!limit.Take(ctx.clock->Now())) {
    Count(ctx, "rate_limited");
    HttpReply reply = HttpReply::Error(429, "too many Hub webhooks: slow down");
    reply.headers.emplace_back("Retry-After", "1");
    return reply;
  }
  nlohmann::json body;
  if (auto failed = ParseJsonBody(request, &body)) {
    Count(ctx, "bad_request");
    return std::move(*failed);
  }
  if (!body.is_object()) {
    Count(ctx, "bad_request");
    return BadRequest("a Hub webhook is a JSON object");
  }
  const std::string scope = StringAt(body, "/event/scope");
  const std::string name = StringAt(body, "/repo/name");
  if (scope.empty()) {
    Count(ctx, "bad_request");
    return BadRequest("a Hub webhook has event.scope");
  }
  const std::string type = StringAt(body, "/repo/type");
  const bool about_repo = scope == "repo" || scope.starts_with("repo.");
  if (!about_repo || (!type.empty() && type != "model")) {
    Count(ctx, "ignored");
    return HttpReply{.status = 204, .content_type = "", .body = ""};
  }
  if (name.empty()) {
    Count(ctx, "bad_request");
    return BadRequest("a Hub webhook about a repo has repo.name");
  }
  using Outcome = schedule::Scheduler::HintOutcome;
  std::optional<std::string> hinted;
  Outcome best = Outcome::kUntracked;  // of the repos named, the one that polls soonest
  for (const std::string& id : NamedRepos(body)) {
    if (!hub::ValidateRepoId(id).ok() || !ctx.control) continue;
    const Outcome outcome = ctx.control->Hint(id, store::PollTrigger::kWebhook);
    if (outcome == Outcome::kUntracked) continue;
    ctx.metrics
        ->counter("hubwatch_hints_received_total", "change hints received", {{"source", "webhook"}})
        .Add();
    if (!hinted) hinted = id;
    if (Rank(outcome) < Rank(best)) best = outcome;
  }
  if (!hinted) {
    Count(ctx, "untracked");
    return HttpReply{.status = 204, .content_type = "", .body = ""};
  }
  const auto [outcome, said] = Described(best);
  Count(ctx, outcome);
  return HttpReply::Json(202, {{"repo", *hinted}, {"poll", said}});
}

}  // namespace

void RegisterHubWebhookRoute(Router& router, const ApiContext& ctx) {
  auto limit = std::make_shared<RateLimit>();
  router.Add(
      {.method = "POST",
       .pattern = "/api/v1/hub-webhooks",
       .handler = [c = &ctx, limit](const HttpRequest& request, const PathParams&,
                                    Respond respond) { respond(Handle(*c, *limit, request)); },
       .max_body_bytes = kMaxBodyBytes});
}

}  // namespace hubwatch::api
