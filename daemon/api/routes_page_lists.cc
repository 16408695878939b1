// The index (GET /, GET /index.json: ?name&owner&family&state&changed_since&after|before&limit),
// the change log (GET /changes?repo&kind&impact&since&before) and the memory estimates against
// published measured runs (GET /calibration, /calibration.md).
// The lists are a page at a time from a keyset cursor (index_page.h, list_pages.h): each
// request reads one page of rows through an index. Every parameter is bounded and checked; a bad
// one, a bad cursor included, is a 400 page saying which.
// Their ETags are over the body: a page is cheap to build, and a 304 still saves the bytes.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/page_reply.h"
#include "daemon/api/query_params.h"
#include "daemon/page/calibration_page.h"
#include "daemon/page/index_page.h"
#include "daemon/page/list_pages.h"
#include "daemon/page/render.h"
#include "tracker/hub/repo_id.h"
#include "tracker/store/since.h"

namespace hubwatch::api {
namespace {

constexpr int64_t kChangesPerPage = 50;
// A search term, family, owner or cursor longer than this is refused (the longest repo id the
// Hub allows is 96 + 1 + 96 bytes).
constexpr size_t kMaxTermBytes = 200;

// The index's parameters, each checked: nullopt and `error` set when one is bad.
std::optional<page::IndexQuery> IndexQueryOf(const QueryParams& query, std::string* error) {
  page::IndexQuery out;
  store::RepoSearch& s = out.search;
  const std::pair<const char*, std::string*> texts[] = {{"name", &s.name},
                                                        {"owner", &s.owner},
                                                        {"family", &s.family},
                                                        {"state", &s.state},
                                                        {"after", &s.after},
                                                        {"before", &s.before},
                                                        {"changed_since", &out.changed_since}};
  for (const auto& [name, value] : texts) {
    *value = query.Get(name).value_or("");
    if (value->size() > kMaxTermBytes) {
      *error = std::string(name) + " is longer than " + std::to_string(kMaxTermBytes) + " bytes";
      return std::nullopt;
    }
  }
  store::RepoState state;
  if (!s.state.empty() && !store::ParseRepoState(s.state, state)) {
    *error = "state must be ok, gated, renamed, deleted, disabled or erroring";
    return std::nullopt;
  }
  if (s.owner.find('/') != std::string::npos) {
    *error = "owner is a namespace (google), without '/'";
    return std::nullopt;
  }
  if (!s.after.empty() && !s.before.empty()) {
    *error = "after and before are two cursors: give one";
    return std::nullopt;
  }
  if (!out.changed_since.empty()) {
    const std::optional<int64_t> t = store::ParseSinceTime(out.changed_since);
    if (!t) {
      *error = "changed_since must be a time (RFC 3339, YYYY-MM-DD or Unix seconds)";
      return std::nullopt;
    }
    s.changed_since = std::max<int64_t>(*t, 1);
  }
  Result<std::optional<int64_t>> limit = query.Int("limit", 1, page::kIndexPageRows);
  if (!limit.ok()) {
    *error = limit.error().message;
    return std::nullopt;
  }
  s.limit = limit->value_or(page::kIndexPageRows);
  return out;
}

void Index(const ApiContext& ctx, const HttpRequest& request, bool json, Respond respond) {
  Result<QueryParams> query = QueryParams::Parse(request.query);
  if (!query.ok()) return respond(PageError(request, 400, query.error().message));
  std::string error;
  std::optional<page::IndexQuery> asked = IndexQueryOf(*query, &error);
  if (!asked) {
    return respond(json ? BadRequest(error) : PageError(request, 400, error));
  }
  // The page lands on a family when nothing is asked; the JSON lists every repo by id.
  Result<page::IndexPage> index = page::LoadIndexPage(ctx.reads(), std::move(*asked), !json);
  if (!index.ok()) return respond(PageError(request, 500, index.error().message));
  std::string body =
      json ? DumpJson(page::IndexJson(*index)) : page::RenderHtml(page::BuildIndexPage(*index));
  const std::string etag = PageTag().Add(body).Value();
  respond(PageReply(request, 200, json ? "application/json" : "text/html; charset=utf-8",
                    std::move(body), etag));
}

// The change log's filters, each checked; nullopt and `reply` set when one is bad.
std::optional<page::ChangesPage> ChangesQueryOf(const ApiContext& ctx, const HttpRequest& request,
                                                const QueryParams& query,
                                                std::optional<HttpReply>* reply) {
  page::ChangesPage page;
  store::ChangeSearch& f = page.filter;
  f.repo = query.Get("repo").value_or("");
  f.kind = query.Get("kind").value_or("");
  f.impact = query.Get("impact").value_or("");
  auto bad = [&](int status, const std::string& message) {
    *reply = PageError(request, status, message);
    return std::nullopt;
  };
  if (!f.repo.empty()) {
    if (Status s = hub::ValidateRepoId(f.repo); !s.ok()) return bad(400, s.error().message);
  }
  if (!f.kind.empty()) {
    if (auto failed = CheckKind(f.kind)) return bad(400, ErrorMessage(*failed));
  }
  if (!f.impact.empty() && !diff::ParseImpact(f.impact)) {
    return bad(400, "impact must be cosmetic, behavioral or breaking");
  }
  if (std::optional<std::string> since = query.Get("since"); since && !since->empty()) {
    store::Query q;
    if (Status s = store::ApplySince(ctx.reads(), f.repo, *since, q); !s.ok()) {
      return bad(s.error().code == ErrorCode::kInvalidInput ? 400 : 500, s.error().message);
    }
    f.committed_since = q.committed_since;
    f.after_revision = q.after_revision;
    page.since = *since;
  }
  if (std::optional<std::string> before = query.Get("before"); before && !before->empty()) {
    std::optional<store::ChangeCursor> cursor = page::ParseChangeCursor(*before);
    if (!cursor) {
      return bad(400, "before must be a cursor of this page's links (COMMITTED_AT.ID)");
    }
    f.before = *cursor;
  }
  return page;
}

void Changes(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  Result<QueryParams> query = QueryParams::Parse(request.query);
  if (!query.ok()) return respond(PageError(request, 400, query.error().message));
  std::optional<HttpReply> failed;
  std::optional<page::ChangesPage> page = ChangesQueryOf(ctx, request, *query, &failed);
  if (!page) return respond(std::move(*failed));
  page->filter.limit = kChangesPerPage + 1;
  Result<std::vector<store::ChangeKey>> keys = ctx.reads().change_pages().Newest(page->filter);
  if (!keys.ok()) return respond(PageError(request, 500, keys.error().message));
  if (static_cast<int64_t>(keys->size()) > kChangesPerPage) {
    keys->resize(kChangesPerPage);
    page->next_before = page::ChangeCursorText({keys->back().committed_at, keys->back().id});
  }
  for (const store::ChangeKey& key : *keys) {
    Result<std::optional<store::ChangeRecord>> c = ctx.reads().revisions().GetChange(key.id);
    if (!c.ok()) return respond(PageError(request, 500, c.error().message));
    if (c->has_value()) page->changes.push_back(std::move(**c));
  }
  std::string body = page::RenderHtml(page::BuildChangesPage(*page));
  const std::string etag = PageTag().Add(body).Value();
  respond(PageReply(request, 200, "text/html; charset=utf-8", std::move(body), etag));
}

// The same for every request: computed once (page::Published), rendered each time (cheap).
void Calibration(const HttpRequest& request, bool markdown, Respond respond) {
  const page::Document doc = page::BuildCalibrationPage();
  std::string body = markdown ? page::RenderMarkdown(doc) : page::RenderHtml(doc);
  const std::string etag = PageTag().Add(body).Value();
  respond(PageReply(request, 200,
                    markdown ? "text/markdown; charset=utf-8" : "text/html; charset=utf-8",
                    std::move(body), etag));
}

}  // namespace

void RegisterPageListRoutes(Router& router, const ApiContext& ctx) {
  // The published runs are estimated here, once per process at startup, so that no request
  // (the first model page, /calibration, /index.json) pays for it.
  page::Published();
  const ApiContext* c = &ctx;
  router.Add({.method = "GET",
              .pattern = "/",
              .handler = [c](const HttpRequest& q, const PathParams&,
                             Respond r) { Index(*c, q, false, std::move(r)); },
              .heavy = true});
  router.Add({.method = "GET",
              .pattern = "/index.json",
              .handler = [c](const HttpRequest& q, const PathParams&,
                             Respond r) { Index(*c, q, true, std::move(r)); },
              .heavy = true});
  router.Add({.method = "GET",
              .pattern = "/changes",
              .handler = [c](const HttpRequest& q, const PathParams&,
                             Respond r) { Changes(*c, q, std::move(r)); },
              .heavy = true});
  for (const bool markdown : {false, true}) {
    router.Add({.method = "GET",
                .pattern = markdown ? "/calibration.md" : "/calibration",
                .handler = [markdown](const HttpRequest& q, const PathParams&,
                                      Respond r) { Calibration(q, markdown, std::move(r)); },
                .heavy = true});
  }
}

}  // namespace hubwatch::api
