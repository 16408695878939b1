// The model page: GET /models/{ns}/{name}[?revision=SHA], its Markdown twin
// GET /models/{ns}/{name}.md, and the pages' stylesheet GET /page.css.
//
// The ETag covers what the page shows: the repo's state and Hub info (read at), the revision
// shown, the stored history
// (its stamp: revisions, rewrites, newest revision and newest change), the host the commands
// name, and the code version (which fixes the estimate of a revision). It is computed from one
// indexed query, so a matching If-None-Match answers 304 without reading the history, and a
// miss is served from ApiContext::pages when the same page was rendered before.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/page_reply.h"
#include "daemon/api/query_params.h"
#include "daemon/api/request_basis.h"
#include "daemon/page/model_page.h"
#include "daemon/page/render.h"
#include "daemon/page/stylesheet.h"
#include "tracker/hub/repo_id.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

// Revisions the page lists; older ones are in the revision history JSON.
constexpr int64_t kMaxHistory = 200;

void ModelPage(const ApiContext& ctx, const HttpRequest& request, const PathParams& params,
               Respond respond) {
  std::string name = params.count("name") ? params.at("name") : "";
  const bool markdown = name.size() > 3 && name.ends_with(".md");
  if (markdown) name.resize(name.size() - 3);
  const std::string repo = (params.count("ns") ? params.at("ns") : "") + "/" + name;
  if (Status s = hub::ValidateRepoId(repo); !s.ok()) {
    return respond(PageError(request, 400, s.error().message));
  }
  Result<QueryParams> query = QueryParams::Parse(request.query);
  if (!query.ok()) return respond(PageError(request, 400, query.error().message));
  store::Store& store = ctx.reads();
  Result<std::optional<store::RepoRecord>> record = store.repos().GetRepo(repo);
  if (!record.ok()) return respond(PageError(request, 500, record.error().message));
  if (!record->has_value()) {
    return respond(PageError(request, 404, "repo " + repo + " is not tracked"));
  }
  std::string sha;
  if (std::optional<std::string> revision = query->Get("revision")) {
    if (auto failed = ResolveRevision(ctx, repo, *revision, "revision", &sha)) {
      return respond(PageError(request, failed->status, ErrorMessage(*failed)));
    }
  }
  Result<store::HistoryStamp> stamp = store.queries().GetHistoryStamp(repo);
  if (!stamp.ok()) return respond(PageError(request, 500, stamp.error().message));
  if (sha.empty()) sha = stamp->head_sha;
  // The estimate's basis first: the page says it is being prepared until it is (and the tag
  // says which, so the page changes when it is ready).
  RequestBasis basis;
  if (!sha.empty()) {
    Result<RequestBasis> found = LookUpBasis(ctx, store, repo, sha);
    if (!found.ok()) return respond(PageError(request, 500, found.error().message));
    basis = std::move(found).value();
  }
  const std::string base_url = BaseUrl(ctx, request);
  PageTag tag;
  tag.Add(markdown ? "md" : "html").Add(repo).Add(store::RepoStateName((*record)->state));
  tag.Add((*record)->state_detail).Add(sha).Add(stamp->revisions).Add(stamp->rewritten_away);
  tag.Add(stamp->newest_sha).Add(stamp->newest_change).Add((*record)->hub_info.fetched_at);
  tag.Add(base_url).Add(sha.empty() || basis.basis ? "estimate" : "preparing");
  // The pins' standing moves when advisories are published, which the stamp does not see.
  Result<std::vector<store::PinStatus>> pins = store::PinStatuses(store, **record);
  if (!pins.ok()) return respond(PageError(request, 500, pins.error().message));
  for (const store::PinStatus& p : *pins) tag.Add(p.pin).Add(p.sha).Add(p.advisories).Add(p.newest);
  const std::string etag = tag.Value();
  const char* type = markdown ? "text/markdown; charset=utf-8" : "text/html; charset=utf-8";
  if (NotModified(request, etag)) return respond(PageReply(request, 200, type, "", etag));

  // The ETag names everything the page shows, so the page rendered for it is served again
  // until one of its inputs moves (and the tag with it).
  const bool gzip = AcceptsGzip(request);
  Result<std::shared_ptr<const EncodedBody>> body =
      ctx.pages->Get(etag + (gzip ? " gzip" : ""), [&]() -> Result<EncodedBody> {
        Result<std::vector<page::RevisionHistory>> history =
            page::LoadHistory(store, repo, kMaxHistory);
        if (!history.ok()) return history.error();
        page::RevisionEstimate estimate;
        if (basis.basis) {
          estimate = page::FinishRevision(*basis.basis);
        } else if (!sha.empty()) {
          estimate.unavailable = PreparingMessage(basis, repo, sha);
        }
        const page::Document doc = page::BuildModelPage({.repo = &**record,
                                                         .sha = sha,
                                                         .estimate = &estimate,
                                                         .history = &*history,
                                                         .pins = *pins,
                                                         .base_url = base_url});
        return EncodeBody(markdown ? page::RenderMarkdown(doc) : page::RenderHtml(doc), gzip);
      });
  if (!body.ok()) return respond(PageError(request, 500, body.error().message));
  respond(PageReply(200, type, **body, etag));
}

}  // namespace

std::string ErrorMessage(const HttpReply& reply) {
  const nlohmann::json j = nlohmann::json::parse(reply.body, nullptr, false);
  return StringAt(j, "/error");
}

void RegisterPageRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add({.method = "GET",
              .pattern = "/models/{ns}/{name}",
              .handler = [c](const HttpRequest& q, const PathParams& p,
                             Respond r) { ModelPage(*c, q, p, std::move(r)); },
              .heavy = true});
  router.Add({"GET", page::kStylesheetPath, [](const HttpRequest& q, const PathParams&, Respond r) {
                const std::string_view css = page::Stylesheet();
                r(PageReply(q, 200, "text/css; charset=utf-8", std::string(css),
                            PageTag().Add(css).Value()));
              }});
  RegisterPageListRoutes(router, ctx);
  RegisterPagePlanRoutes(router, ctx);
}

}  // namespace hubwatch::api
