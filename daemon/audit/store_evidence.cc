#include "daemon/audit/store_evidence.h"

#include <nlohmann/json.hpp>

#include "tracker/store/since.h"

namespace hubwatch::audit {

AuditAdvisory AuditAdvisoryOf(const store::AdvisoryRecord& record) {
  AuditAdvisory a{.id = record.id, .kind = record.kind, .fixed_in = record.sha};
  const nlohmann::json* specific =
      record.osv.is_object() && record.osv.contains("database_specific")
          ? &record.osv["database_specific"]
          : nullptr;
  if (specific && specific->is_object() && specific->contains("impact") &&
      (*specific)["impact"].is_string()) {
    a.impact = diff::ParseImpact((*specific)["impact"].get<std::string>())
                   .value_or(diff::Impact::kCosmetic);
  }
  if (record.osv.is_object() && record.osv.contains("summary") &&
      record.osv["summary"].is_string()) {
    a.summary = record.osv["summary"].get<std::string>();
  }
  return a;
}

Result<std::vector<Evidence>> StoreEvidence::Gather(const std::vector<EvidenceRequest>& requests,
                                                    const std::string& since) {
  if (!since.empty() && !store::ParseSinceTime(since)) {
    return Error::InvalidInput("--since must be a time (RFC 3339, YYYY-MM-DD or Unix seconds)");
  }
  std::vector<Evidence> out;
  out.reserve(requests.size());
  for (const EvidenceRequest& request : requests) {
    Result<Evidence> e = GatherOne(request, since);
    if (!e.ok()) return e.error();
    out.push_back(std::move(e).value());
  }
  return out;
}

Result<Evidence> StoreEvidence::GatherOne(const EvidenceRequest& request,
                                          const std::string& since) {
  Evidence e;
  Result<std::optional<store::RepoRecord>> repo = store_.repos().GetRepo(request.repo);
  if (!repo.ok()) return repo.error();
  if (!*repo) {
    Result<const derivatives::DerivativeRecord*> d = DerivativeOf(request.repo);
    if (!d.ok()) return d.error();
    if (*d) {
      const derivatives::DerivativeRecord& r = **d;
      DerivativeLag lag{.upstream = r.upstream,
                        .relation = std::string(derivatives::RelationName(r.relation)),
                        .head = r.head,
                        .current = r.current};
      for (const derivatives::AdvisoryLag& l : r.lags) {
        if (l.status != derivatives::LagStatus::kLagging || !r.current) continue;
        Result<AuditAdvisory> a = AdvisoryById(l.advisory_id);
        if (!a.ok()) return a.error();
        if (!a->id.empty()) lag.lagging.push_back(std::move(a).value());
      }
      e.derivative = std::move(lag);
    }
    return e;
  }
  e.tracked = true;
  Result<std::optional<store::RevisionRecord>> latest =
      store_.revisions().LatestRevision(request.repo);
  if (!latest.ok()) return latest.error();
  if (*latest) e.newest = (*latest)->sha;

  std::vector<store::AdvisoryRecord> records;
  if (request.kind == RevisionKind::kFullSha || request.kind == RevisionKind::kShortSha) {
    Result<std::string> sha = store::ResolveRevision(store_, request.repo, request.revision);
    if (!sha.ok()) {
      if (sha.error().code != ErrorCode::kInvalidInput) return sha.error();
      e.problem = sha.error().message;
      return e;
    }
    e.sha = *sha;
    Result<std::vector<store::AdvisoryRecord>> found =
        store_.advisories().AdvisoriesAffecting({.repo = request.repo, .commit = e.sha});
    if (!found.ok()) return found.error();
    records = std::move(found).value();
  } else if (!since.empty() && request.kind != RevisionKind::kComputed) {
    store::Query q{.repo = request.repo};
    if (Status s = store::ApplySince(store_, request.repo, since, q); !s.ok()) return s.error();
    Result<std::vector<store::AdvisoryRecord>> found = store_.advisories().ListAdvisories(q);
    if (!found.ok()) return found.error();
    records = std::move(found).value();
  }
  for (const store::AdvisoryRecord& r : records) {
    if (!r.withdrawn) e.advisories.push_back(AuditAdvisoryOf(r));
  }
  return e;
}

Result<const derivatives::DerivativeRecord*> StoreEvidence::DerivativeOf(const std::string& repo) {
  if (!derivatives_read_) {
    Result<std::vector<store::RepoRecord>> repos = store_.repos().ListRepos();
    if (!repos.ok()) return repos.error();
    for (const store::RepoRecord& upstream : *repos) {
      Result<std::vector<derivatives::DerivativeRecord>> list =
          store_.derivatives().List(upstream.id);
      if (!list.ok()) return list.error();
      for (derivatives::DerivativeRecord& d : *list) {
        std::string id = d.id;
        derivatives_.emplace(std::move(id), std::move(d));  // the first upstream's, if several
      }
    }
    derivatives_read_ = true;
  }
  auto it = derivatives_.find(repo);
  return it == derivatives_.end() ? nullptr : &it->second;
}

Result<AuditAdvisory> StoreEvidence::AdvisoryById(const std::string& id) {
  Result<std::optional<store::AdvisoryRecord>> a = store_.advisories().GetAdvisory(id);
  if (!a.ok()) return a.error();
  if (!*a || (*a)->withdrawn) return AuditAdvisory{};
  return AuditAdvisoryOf(**a);
}

}  // namespace hubwatch::audit
