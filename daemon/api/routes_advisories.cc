// Advisory feeds: GET /api/v1/advisories (JSON, by seq), /api/v1/advisories/feed.atom (Atom,
// newest first) and /api/v1/stream (Server-Sent Events). All take ?repo= and ?kind= filters. The
// JSON list's entries of upstream advisories that derivatives were checked against carry
// "derivatives": counts by status.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/atom.h"
#include "daemon/api/derivatives_json.h"
#include "daemon/api/query_params.h"
#include "daemon/api/sse.h"
#include "tracker/advisory/osv.h"
#include "tracker/advisory/time_text.h"
#include "tracker/hub/repo_id.h"
#include "tracker/store/since.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

constexpr int64_t kFeedEntries = 50;

struct Filters {
  QueryParams query;
  std::string repo;
  std::string kind;
};

bool IsFollowKind(const std::string& kind) { return kind == "tracked" || kind == "untracked"; }

// `follow_kinds`: kind= may also be "tracked" or "untracked" (the feed and the stream carry
// follow events).
std::optional<HttpReply> ParseFilters(const HttpRequest& request, Filters* f,
                                      bool follow_kinds = false) {
  Result<QueryParams> q = QueryParams::Parse(request.query);
  if (!q.ok()) return BadRequest(q.error().message);
  f->query = std::move(q).value();
  f->repo = f->query.Get("repo").value_or("");
  f->kind = f->query.Get("kind").value_or("");
  if (!f->repo.empty()) {
    if (Status s = hub::ValidateRepoId(f->repo); !s.ok()) return BadRequest(s.error().message);
  }
  if (follow_kinds && IsFollowKind(f->kind)) return std::nullopt;
  if (!f->kind.empty()) return CheckKind(f->kind);
  return std::nullopt;
}

// The newest follow events the filters let through, at most `limit`.
Result<std::vector<store::FollowEvent>> RecentFollowEvents(const ApiContext& ctx, const Filters& f,
                                                           int64_t limit) {
  if (!f.kind.empty() && !IsFollowKind(f.kind)) return std::vector<store::FollowEvent>{};
  // Filtered here: a repo's or a kind's events are a few among the newest.
  Result<std::vector<store::FollowEvent>> events =
      ctx.reads().follows().LatestEvents(f.repo.empty() && f.kind.empty() ? limit : kMaxLimit);
  if (!events.ok()) return events.error();
  std::erase_if(*events, [&](const store::FollowEvent& e) {
    return (!f.repo.empty() && e.repo != f.repo) || (!f.kind.empty() && e.kind != f.kind);
  });
  if (static_cast<int64_t>(events->size()) > limit) events->resize(static_cast<size_t>(limit));
  return events;
}

// ?since= a revision of ?repo= or a commit time (store/since.h); ?affects=SHA the advisories
// whose range holds that revision of ?repo= (osv.dev's "affected"); ?after=SEQ the page after
// that seq; ?modified_since= a time hubwatch wrote the record at or after.
void ListAdvisories(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  Filters f;
  if (auto failed = ParseFilters(request, &f)) return respond(std::move(*failed));
  Result<std::optional<int64_t>> limit = f.query.Int("limit", 1, kMaxLimit);
  if (!limit.ok()) return respond(BadRequest(limit.error().message));
  Result<std::optional<int64_t>> after = f.query.Int("after", 0, INT64_MAX);
  if (!after.ok()) return respond(BadRequest(after.error().message));
  store::Query q{.repo = f.repo,
                 .kind = f.kind,
                 .after_seq = after->value_or(0),
                 .limit = limit->value_or(kDefaultLimit)};
  if (std::optional<std::string> since = f.query.Get("since")) {
    if (Status s = store::ApplySince(ctx.reads(), f.repo, *since, q); !s.ok()) {
      return respond(FilterFailure(s.error()));
    }
  }
  if (std::optional<std::string> modified = f.query.Get("modified_since")) {
    std::optional<int64_t> t = store::ParseSinceTime(*modified);
    if (!t) return respond(BadRequest("modified_since must be a time (RFC 3339 or YYYY-MM-DD)"));
    q.modified_since = advisory::Rfc3339(*t);
  }
  if (std::optional<std::string> affects = f.query.Get("affects")) {
    if (f.repo.empty()) {
      return respond(BadRequest("affects=SHA needs repo= (a revision is a repo's)"));
    }
    Result<std::string> pin = store::ResolveRevision(ctx.reads(), f.repo, *affects);
    if (!pin.ok()) return respond(FilterFailure(pin.error()));
    q.affects = *pin;
  }
  Result<std::vector<store::AdvisoryRecord>> list = ctx.reads().advisories().ListAdvisories(q);
  if (!list.ok()) return respond(StoreFailure(list.error()));
  if (Status s = WithDerivativeCounts(ctx.reads(), *list); !s.ok()) {
    return respond(StoreFailure(s.error()));
  }
  nlohmann::json entries = nlohmann::json::array();
  for (const store::AdvisoryRecord& a : *list) {
    entries.push_back(AdvisoryEntryJson(a));
    const nlohmann::json::json_pointer counts("/database_specific/derivatives");
    if (a.osv.contains(counts)) entries.back()["derivatives"] = a.osv.at(counts);
  }
  nlohmann::json body = {{"advisories", std::move(entries)}};
  // The cursor for the next page: ?after=<the last seq of this one>.
  if (static_cast<int64_t>(list->size()) == q.limit) body["next_after"] = list->back().seq;
  respond(HttpReply::Json(200, body));
}

void AtomFeed(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  Filters f;
  if (auto failed = ParseFilters(request, &f, true)) return respond(std::move(*failed));
  Result<std::optional<int64_t>> limit = f.query.Int("limit", 1, kMaxLimit);
  if (!limit.ok()) return respond(BadRequest(limit.error().message));
  const int64_t entries = limit->value_or(kFeedEntries);
  Result<std::vector<store::AdvisoryRecord>> list = std::vector<store::AdvisoryRecord>{};
  if (!IsFollowKind(f.kind)) {
    list = ctx.reads().advisories().RecentAdvisories(
        {.repo = f.repo, .kind = f.kind, .limit = entries});
  }
  if (!list.ok()) return respond(StoreFailure(list.error()));
  Result<std::vector<store::FollowEvent>> follows = RecentFollowEvents(ctx, f, entries);
  if (!follows.ok()) return respond(StoreFailure(follows.error()));
  AtomOptions options;
  options.base_url = BaseUrl(ctx, request);
  options.self_url =
      options.base_url + request.path + (request.query.empty() ? "" : "?") + request.query;
  options.hub_url = ctx.hub_url;
  options.scope = f.repo + (!f.repo.empty() && !f.kind.empty() ? "/" : "") + f.kind;
  options.now = ctx.now();
  HttpReply reply;
  reply.content_type = "application/atom+xml; charset=utf-8";
  reply.body = RenderAtomFeed(*list, options, *follows, static_cast<size_t>(entries));
  respond(std::move(reply));
}

// Resumes after Last-Event-ID (or ?after=SEQ); without either, starts with what comes next.
void Stream(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  Filters f;
  if (auto failed = ParseFilters(request, &f, true)) return respond(std::move(*failed));
  EventStreamStart start{.repo = f.repo, .kind = f.kind};
  std::optional<std::string> resume;
  if (std::optional<std::string_view> last = request.header("last-event-id")) {
    resume = std::string(*last);
  } else {
    resume = f.query.Get("after");
  }
  if (resume) {
    std::optional<StreamPosition> at = ParseStreamPosition(*resume);
    if (!at) {
      return respond(BadRequest(
          "Last-Event-ID (or after) must be an event id: an advisory seq, or SEQ.FOLLOW_SEQ"));
    }
    // An id without a follow part: no follow event existed when its stream began.
    start.after_seq = at->advisory;
    start.after_follow_seq = at->follow;
  } else {
    Result<int64_t> max = ctx.reads().advisories().MaxAdvisorySeq();
    if (!max.ok()) return respond(StoreFailure(max.error()));
    start.after_seq = *max;
    Result<int64_t> follow = ctx.reads().follows().LastEventSeq();
    if (!follow.ok()) return respond(StoreFailure(follow.error()));
    start.after_follow_seq = *follow;
  }
  HttpReply reply;
  reply.content_type = "text/event-stream; charset=utf-8";
  reply.headers.emplace_back("Cache-Control", "no-store");
  reply.body = SseStart(ctx.tuning.sse_retry_ms);
  reply.event_stream = start;
  respond(std::move(reply));
}

}  // namespace

void RegisterAdvisoryRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add({.method = "GET",
              .pattern = "/api/v1/advisories",
              .handler = [c](const HttpRequest& request, const PathParams&,
                             Respond respond) { ListAdvisories(*c, request, std::move(respond)); },
              .heavy = true});
  router.Add({.method = "GET",
              .pattern = "/api/v1/advisories/feed.atom",
              .handler = [c](const HttpRequest& request, const PathParams&,
                             Respond respond) { AtomFeed(*c, request, std::move(respond)); },
              .heavy = true});
  router.Add({"GET", "/api/v1/stream",
              [c](const HttpRequest& request, const PathParams&, Respond respond) {
                Stream(*c, request, std::move(respond));
              }});
}

}  // namespace hubwatch::api
