// osv.dev-compatible endpoints (POST /v1/query, /v1/querybatch, GET /v1/vulns/{id}), so osv.dev
// clients (osv-detector's "api" databases, scripts) can use hubwatch as a database: GET
// /v1/vulns/{id}, POST /v1/query, POST /v1/querybatch. Responses follow osv.dev's proto3 JSON: an
// empty list is left out, so a query without matches answers {}. Whole records of upstream
// advisories that derivatives were checked against carry database_specific.derivatives (counts
// by status, as of serving).

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/derivatives_json.h"
#include "daemon/api/osv_query.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

constexpr size_t kMaxBatch = 1000;  // osv.dev's limit on queries per batch

bool IsHexPrefix(const std::string& s) {
  return s.size() >= 7 && s.size() <= 40 &&
         s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The commit a package version names: a revision prefix or a tracked ref; "" when none.
Result<std::string> ResolveVersion(store::Store& store, const std::string& repo,
                                   const std::string& version) {
  if (IsHexPrefix(version)) {
    Result<std::vector<std::string>> shas = store.queries().FindRevisionShas(repo, version, 2);
    if (!shas.ok()) return shas.error();
    return shas->size() == 1 ? shas->front() : std::string();
  }
  Result<std::optional<std::string>> head = store.repos().GetRefHead(repo, version);
  if (!head.ok()) return head.error();
  return head->value_or("");
}

struct Page {
  std::vector<store::AdvisoryRecord> vulns;
  std::optional<int64_t> next_after;  // more after this seq
};

Result<Page> RunQuery(const ApiContext& ctx, const OsvQuery& q) {
  Page page;
  if (q.matches_nothing) return page;
  store::Store& store = ctx.reads();
  std::string commit = q.commit;
  if (!q.version.empty()) {
    Result<std::string> resolved = ResolveVersion(store, q.repo, q.version);
    if (!resolved.ok()) return resolved.error();
    if (resolved->empty()) return page;
    commit = *resolved;
  }
  std::vector<std::string> repos;
  if (!q.repo.empty()) {
    repos.push_back(q.repo);
  } else {
    Result<std::vector<std::string>> found = store.queries().ReposWithRevision(commit);
    if (!found.ok()) return found.error();
    repos = std::move(found).value();
  }
  const int64_t size = std::max<int64_t>(1, ctx.tuning.osv_page_size);
  // seq is global, so pages over several repos merge by seq.
  for (const std::string& repo : repos) {
    Result<std::vector<store::AdvisoryRecord>> found = store.advisories().AdvisoriesAffecting(
        {.repo = repo, .commit = commit, .after_seq = q.after_seq, .limit = size + 1});
    if (!found.ok()) return found.error();
    for (store::AdvisoryRecord& a : *found) page.vulns.push_back(std::move(a));
  }
  std::sort(page.vulns.begin(), page.vulns.end(),
            [](const auto& a, const auto& b) { return a.seq < b.seq; });
  if (static_cast<int64_t>(page.vulns.size()) > size) {
    page.vulns.resize(static_cast<size_t>(size));
    page.next_after = page.vulns.back().seq;
  }
  return page;
}

// Whole records are up to ~100 KB each (diffs in details): a page ends, with a token, once it
// holds more than `max_bytes` of them (always at least one), so replies stay under the cap.
void EndPageAtBytes(size_t max_bytes, Page* page) {
  size_t bytes = 0;
  for (size_t i = 0; i < page->vulns.size(); ++i) {
    bytes += DumpJson(page->vulns[i].osv).size();
    if (bytes > max_bytes && i > 0) {
      page->vulns.resize(i);
      page->next_after = page->vulns.back().seq;
      return;
    }
  }
}

// {"vulns": [...], "next_page_token": "..."}; `full` = whole records, else id and modified.
nlohmann::json PageJson(const Page& page, bool full) {
  nlohmann::json j = nlohmann::json::object();
  if (!page.vulns.empty()) {
    nlohmann::json vulns = nlohmann::json::array();
    for (const store::AdvisoryRecord& a : page.vulns) {
      vulns.push_back(full ? a.osv : nlohmann::json{{"id", a.id}, {"modified", a.modified}});
    }
    j["vulns"] = std::move(vulns);
  }
  if (page.next_after) j["next_page_token"] = PageToken(*page.next_after);
  return j;
}

void GetVuln(const ApiContext& ctx, const PathParams& params, Respond respond) {
  const std::string& id = params.at("id");
  Result<std::optional<store::AdvisoryRecord>> a = ctx.reads().advisories().GetAdvisory(id);
  if (!a.ok()) return respond(StoreFailure(a.error()));
  if (!a->has_value()) {
    return respond(HttpReply::Error(404, "no advisory " + id.substr(0, 80)));
  }
  std::vector<store::AdvisoryRecord> one{std::move(**a)};
  if (Status s = WithDerivativeCounts(ctx.reads(), one); !s.ok()) {
    return respond(StoreFailure(s.error()));
  }
  respond(HttpReply::Json(200, one.front().osv));
}

void Query(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  nlohmann::json body;
  if (auto failed = ParseJsonBody(request, &body)) return respond(std::move(*failed));
  Result<OsvQuery> q = ParseOsvQuery(body, ctx.hub_url);
  if (!q.ok()) return respond(BadRequest(q.error().message));
  Result<Page> page = RunQuery(ctx, *q);
  if (!page.ok()) return respond(StoreFailure(page.error()));
  if (Status s = WithDerivativeCounts(ctx.reads(), page->vulns); !s.ok()) {
    return respond(StoreFailure(s.error()));
  }
  EndPageAtBytes(ctx.tuning.osv_page_bytes, &*page);
  respond(HttpReply::Json(200, PageJson(*page, /*full=*/true)));
}

void QueryBatch(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  nlohmann::json body;
  if (auto failed = ParseJsonBody(request, &body)) return respond(std::move(*failed));
  if (!body.is_object() || !body.contains("queries") || !body["queries"].is_array()) {
    return respond(BadRequest("querybatch needs {\"queries\": [...]}"));
  }
  const nlohmann::json& queries = body["queries"];
  if (queries.size() > kMaxBatch) {
    return respond(BadRequest("at most " + std::to_string(kMaxBatch) + " queries per batch"));
  }
  std::vector<OsvQuery> parsed;
  for (size_t i = 0; i < queries.size(); ++i) {
    Result<OsvQuery> q = ParseOsvQuery(queries[i], ctx.hub_url);
    if (!q.ok()) {
      return respond(BadRequest("queries[" + std::to_string(i) + "]: " + q.error().message));
    }
    parsed.push_back(std::move(q).value());
  }
  // A query asked twice is run once: its result is copied to every place it was asked (a
  // scanner often repeats a pinned commit once per file that pins it).
  const std::vector<size_t> first = FirstAsked(parsed);
  nlohmann::json results = nlohmann::json::array();
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (first[i] != i) {
      results.push_back(results[first[i]]);
      continue;
    }
    Result<Page> page = RunQuery(ctx, parsed[i]);
    if (!page.ok()) return respond(StoreFailure(page.error()));
    results.push_back(PageJson(*page, /*full=*/false));
  }
  respond(HttpReply::Json(200, {{"results", std::move(results)}}));
}

}  // namespace

void RegisterOsvRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add(
      {"GET", "/v1/vulns/{id}", [c](const HttpRequest&, const PathParams& params, Respond respond) {
         GetVuln(*c, params, std::move(respond));
       }});
  router.Add({.method = "POST",
              .pattern = "/v1/query",
              .handler = [c](const HttpRequest& request, const PathParams&,
                             Respond respond) { Query(*c, request, std::move(respond)); },
              .heavy = true});
  router.Add({.method = "POST",
              .pattern = "/v1/querybatch",
              .handler = [c](const HttpRequest& request, const PathParams&,
                             Respond respond) { QueryBatch(*c, request, std::move(respond)); },
              .heavy = true});
}

}  // namespace hubwatch::api
