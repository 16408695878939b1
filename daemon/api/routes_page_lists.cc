// The index (GET /, GET /index.json), the change log
// (GET /changes?repo&kind&impact&since&before) and the memory estimates against published
// measured runs (GET /calibration, /calibration.md).
// Their ETags are over the body: the lists are cheap to build, and a 304 still saves the bytes.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/page_reply.h"
#include "daemon/api/query_params.h"
#include "daemon/page/calibration_page.h"
#include "daemon/page/list_pages.h"
#include "tracker/store/since.h"
#include "daemon/page/render.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::api {
namespace {

constexpr int64_t kChangesPerPage = 50;

void Index(const ApiContext& ctx, const HttpRequest& request, bool json, Respond respond) {
  Result<std::vector<page::IndexRow>> rows = page::LoadIndex(ctx.reads());
  if (!rows.ok()) return respond(PageError(request, 500, rows.error().message));
  std::string body =
      json ? DumpJson(page::IndexJson(*rows)) : page::RenderHtml(page::BuildIndexPage(*rows));
  const std::string etag = PageTag().Add(body).Value();
  respond(PageReply(request, 200, json ? "application/json" : "text/html; charset=utf-8",
                    std::move(body), etag));
}

void Changes(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  Result<QueryParams> query = QueryParams::Parse(request.query);
  if (!query.ok()) return respond(PageError(request, 400, query.error().message));
  page::ChangesPage page;
  store::ChangeBrowse& f = page.filter;
  f.repo = query->Get("repo").value_or("");
  f.kind = query->Get("kind").value_or("");
  f.impact = query->Get("impact").value_or("");
  if (!f.repo.empty()) {
    if (Status s = hub::ValidateRepoId(f.repo); !s.ok()) {
      return respond(PageError(request, 400, s.error().message));
    }
  }
  if (!f.kind.empty()) {
    if (auto failed = CheckKind(f.kind)) {
      return respond(PageError(request, 400, ErrorMessage(*failed)));
    }
  }
  if (!f.impact.empty() && !diff::ParseImpact(f.impact)) {
    return respond(PageError(request, 400, "impact must be cosmetic, behavioral or breaking"));
  }
  if (std::optional<std::string> since = query->Get("since"); since && !since->empty()) {
    store::Query q;
    if (Status s = store::ApplySince(ctx.reads(), f.repo, *since, q); !s.ok()) {
      const int status = s.error().code == ErrorCode::kInvalidInput ? 400 : 500;
      return respond(PageError(request, status, s.error().message));
    }
    f.committed_since = q.committed_since;
    f.after_revision = q.after_revision;
    page.since = *since;
  }
  Result<std::optional<int64_t>> before = query->Int("before", 1, INT64_MAX);
  if (!before.ok()) return respond(PageError(request, 400, before.error().message));
  f.before_id = before->value_or(0);
  f.limit = kChangesPerPage + 1;
  Result<std::vector<store::ChangeRecord>> changes = ctx.reads().revisions().BrowseChanges(f);
  if (!changes.ok()) return respond(PageError(request, 500, changes.error().message));
  page.changes = std::move(changes).value();
  if (static_cast<int64_t>(page.changes.size()) > kChangesPerPage) {
    page.changes.resize(kChangesPerPage);
    page.next_before = page.changes.back().id;
  }
  std::string body = page::RenderHtml(page::BuildChangesPage(page));
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
