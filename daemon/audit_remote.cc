#include "daemon/audit_remote.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/audit/store_evidence.h"
#include "daemon/cli_remote.h"
#include "estimator/base/text.h"

namespace hubwatch::cli {
namespace {

constexpr int kMaxPages = 1000;  // of one query's advisories
// The most queries one POST /v1/querybatch may carry: the server's limit (osv.dev's too), which
// answers a larger batch 400.
constexpr size_t kMaxQueriesPerBatch = 1000;

std::string RepoPath(const std::string& repo) { return "/api/v1/repos/" + UrlEscape(repo, true); }

std::string Text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool Pinned(audit::RevisionKind kind) {
  return kind == audit::RevisionKind::kFullSha || kind == audit::RevisionKind::kShortSha;
}

// The ids of one query's advisories: the batch's first page, then /v1/query for the rest.
Result<std::vector<std::string>> Ids(ApiClient& api, nlohmann::json query,
                                     const nlohmann::json& first_page) {
  std::vector<std::string> ids;
  nlohmann::json page = first_page;
  for (int n = 0; n < kMaxPages; ++n) {
    if (!page.is_object()) return Error::Io("--api: a /v1/querybatch result is not an object");
    if (const auto vulns = page.find("vulns"); vulns != page.end() && vulns->is_array()) {
      for (const nlohmann::json& v : *vulns) {
        if (v.is_object()) ids.push_back(Text(v, "id"));
      }
    }
    const std::string token = Text(page, "next_page_token");
    if (token.empty()) return ids;
    query["page_token"] = token;
    Result<nlohmann::json> next = api.Post("/v1/query", query);
    if (!next.ok()) return next.error();
    page = std::move(next).value();
  }
  return ids;
}

}  // namespace

Result<ServerEvidence::RepoFacts> ServerEvidence::Facts(const std::string& repo) {
  if (auto it = facts_.find(repo); it != facts_.end()) return it->second;
  RepoFacts facts;
  Result<std::optional<nlohmann::json>> tracked = api_.GetIfFound(RepoPath(repo));
  if (!tracked.ok()) return tracked.error();
  if (*tracked) {
    facts.tracked = true;
    Result<nlohmann::json> revs = api_.Get(RepoPath(repo) + "/revisions?limit=1");
    if (!revs.ok()) return revs.error();
    const auto list = revs->find("revisions");
    if (list != revs->end() && list->is_array() && !list->empty() && list->front().is_object()) {
      facts.newest = Text(list->front(), "sha");
    }
  }
  facts_[repo] = facts;
  return facts;
}

Result<audit::AuditAdvisory> ServerEvidence::Advisory(const std::string& id) {
  if (auto it = advisories_.find(id); it != advisories_.end()) return it->second;
  Result<nlohmann::json> osv = api_.Get("/v1/vulns/" + UrlEscape(id));
  if (!osv.ok()) return osv.error();
  store::AdvisoryRecord record{.id = id, .osv = std::move(osv).value()};
  const nlohmann::json& specific = record.osv.contains("database_specific")
                                       ? record.osv["database_specific"]
                                       : nlohmann::json::object();
  if (specific.is_object()) {
    record.kind = Text(specific, "kind");
    record.sha = Text(specific, "revision");
  }
  audit::AuditAdvisory a = audit::AuditAdvisoryOf(record);
  advisories_[id] = a;
  return a;
}

Result<const nlohmann::json*> ServerEvidence::DerivativeOf(const std::string& repo) {
  if (!derivatives_read_) {
    derivatives_read_ = true;
    // The repo list is paged: each reply names the next page (next_after) while there is one.
    std::string after;
    do {
      Result<nlohmann::json> repos =
          api_.Get("/api/v1/repos" + (after.empty() ? "" : "?after=" + UrlEscape(after)));
      if (!repos.ok()) return repos.error();
      const auto list = repos->find("repos");
      for (const nlohmann::json& r :
           list != repos->end() && list->is_array() ? *list : nlohmann::json::array()) {
        const std::string upstream = r.is_object() ? Text(r, "id") : "";
        if (upstream.empty()) continue;
        Result<nlohmann::json> d = api_.Get(RepoPath(upstream) + "/derivatives");
        if (!d.ok()) return d.error();
        const auto entries = d->find("derivatives");
        if (entries == d->end() || !entries->is_array()) continue;
        for (const nlohmann::json& e : *entries) {
          if (e.is_object()) derivatives_.emplace(Text(e, "id"), std::make_pair(upstream, e));
        }
      }
      const std::string next = Text(*repos, "next_after");
      after = next > after ? next : "";  // a cursor that does not move ends the walk
    } while (!after.empty());
  }
  auto it = derivatives_.find(repo);
  return it == derivatives_.end() ? nullptr : &it->second.second;
}

Result<ServerEvidence::Resolved> ServerEvidence::Resolve(const std::string& repo,
                                                         const std::string& revision) {
  const auto key = std::make_pair(repo, revision);
  if (auto it = resolved_.find(key); it != resolved_.end()) return it->second;
  Result<std::optional<nlohmann::json>> rev =
      api_.GetIfFound(RepoPath(repo) + "/revisions/" + UrlEscape(revision));
  if (!rev.ok() && rev.error().code != ErrorCode::kInvalidInput) return rev.error();
  Resolved out;
  if (!rev.ok()) {
    out.problem = rev.error().message.substr(std::string("--api: ").size());
  } else if (!*rev) {
    out.problem = "no revision " + revision + " of " + repo;
  } else {
    out.sha = Text(**rev, "sha");
  }
  resolved_[key] = out;
  return out;
}

Result<const std::vector<audit::AuditAdvisory>*> ServerEvidence::Received(
    const std::string& repo, const std::string& since) {
  if (auto it = received_.find(repo); it != received_.end()) return &it->second;
  RemoteAdvisoryQuery query;
  query.repo = repo;
  query.since = since;
  Result<std::vector<store::AdvisoryRecord>> found = RemoteAdvisories(api_, query);
  if (!found.ok()) return found.error();
  std::vector<audit::AuditAdvisory>& list = received_[repo];
  for (const store::AdvisoryRecord& r : *found) {
    if (!r.withdrawn) list.push_back(audit::AuditAdvisoryOf(r));
  }
  return &list;
}

Result<std::vector<audit::Evidence>> ServerEvidence::Gather(
    const std::vector<audit::EvidenceRequest>& requests, const std::string& since) {
  std::vector<audit::Evidence> out(requests.size());
  // Pins: resolved one by one (an unknown revision is said so), then judged in batches, each
  // (repo, sha) asked once and its answer given to every reference that pins it.
  std::map<std::pair<std::string, std::string>, size_t> query_of;  // (repo, sha) -> query
  std::vector<std::vector<size_t>> askers;  // per query: the request indexes it answers
  nlohmann::json queries = nlohmann::json::array();
  for (size_t i = 0; i < requests.size(); ++i) {
    const audit::EvidenceRequest& q = requests[i];
    audit::Evidence& e = out[i];
    Result<RepoFacts> facts = Facts(q.repo);
    if (!facts.ok()) return facts.error();
    e.tracked = facts->tracked;
    e.newest = facts->newest;
    if (!e.tracked) {
      if (Status s = ReadDerivative(q.repo, e); !s.ok()) return s.error();
      continue;
    }
    if (Pinned(q.kind)) {
      Result<Resolved> rev = Resolve(q.repo, q.revision);
      if (!rev.ok()) return rev.error();
      e.sha = rev->sha;
      e.problem = rev->problem;
      if (e.sha.empty()) continue;
      auto [it, added] = query_of.emplace(std::make_pair(q.repo, e.sha), askers.size());
      if (added) {
        queries.push_back({{"package", {{"name", q.repo}}}, {"version", e.sha}});
        askers.emplace_back();
      }
      askers[it->second].push_back(i);
    } else if (!since.empty() && q.kind != audit::RevisionKind::kComputed) {
      Result<const std::vector<audit::AuditAdvisory>*> received = Received(q.repo, since);
      if (!received.ok()) return received.error();
      e.advisories = **received;
    }
  }
  for (size_t first = 0; first < queries.size(); first += kMaxQueriesPerBatch) {
    const size_t count = std::min(kMaxQueriesPerBatch, queries.size() - first);
    nlohmann::json batch_queries = nlohmann::json::array();
    for (size_t k = 0; k < count; ++k) batch_queries.push_back(queries[first + k]);
    Result<nlohmann::json> batch = api_.Post("/v1/querybatch", {{"queries", batch_queries}});
    if (!batch.ok()) return batch.error();
    const auto results = batch->find("results");
    if (results == batch->end() || !results->is_array() || results->size() != count) {
      return Error::Io("--api: /v1/querybatch answered " + std::to_string(count) +
                       " queries with something else");
    }
    for (size_t k = 0; k < count; ++k) {
      Result<std::vector<std::string>> ids = Ids(api_, batch_queries[k], (*results)[k]);
      if (!ids.ok()) return ids.error();
      std::vector<audit::AuditAdvisory> advisories;
      for (const std::string& id : *ids) {
        Result<audit::AuditAdvisory> a = Advisory(id);
        if (!a.ok()) return a.error();
        advisories.push_back(std::move(a).value());
      }
      for (size_t i : askers[first + k]) out[i].advisories = advisories;
    }
  }
  return out;
}

Status ServerEvidence::ReadDerivative(const std::string& repo, audit::Evidence& e) {
  Result<const nlohmann::json*> d = DerivativeOf(repo);
  if (!d.ok()) return d.error();
  if (!*d) return Status::Ok();
  const nlohmann::json& entry = **d;
  audit::DerivativeLag lag{.upstream = derivatives_[repo].first,
                           .relation = Text(entry, "relation"),
                           .head = Text(entry, "head"),
                           .current = Text(entry, "status") != "unchecked"};
  const auto lags = entry.find("advisories");
  if (lags != entry.end() && lags->is_array()) {
    for (const nlohmann::json& l : *lags) {
      if (!l.is_object() || Text(l, "status") != "lagging") continue;
      Result<audit::AuditAdvisory> a = Advisory(Text(l, "id"));
      if (!a.ok()) return a.error();
      lag.lagging.push_back(std::move(a).value());
    }
  }
  e.derivative = std::move(lag);
  return Status::Ok();
}

}  // namespace hubwatch::cli
