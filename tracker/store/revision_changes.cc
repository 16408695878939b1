// RevisionStore: changes and estimates (the revisions themselves and Ingest are in
// revision_store.cc).

#include "tracker/store/connection.h"
#include "tracker/store/revision_store.h"

namespace hubwatch::store {

constexpr const char kChangeColumns[] =
    "SELECT id, repo, sha, ordinal, kind, impact, path, summary, details, created_at, "
    "(SELECT r.authored_at FROM revisions r WHERE r.repo = changes.repo AND r.sha = changes.sha) "
    "FROM changes ";

static Result<ChangeRecord> ReadChange(const Statement& q) {
  ChangeRecord r;
  r.id = q.Int(0);
  r.repo = q.Text(1);
  r.sha = q.Text(2);
  r.ordinal = static_cast<int>(q.Int(3));
  const std::string what = "change " + std::to_string(r.id) + " (" + r.repo + "@" + r.sha + ")";
  if (!diff::ParseKind(q.Text(4), r.change.kind)) {
    return Error::Io("store: " + what + " is damaged: not a known kind");
  }
  const std::optional<diff::Impact> impact = diff::ParseImpact(q.Text(5));
  if (!impact) return Error::Io("store: " + what + " is damaged: not a known impact");
  r.change.impact = *impact;
  r.change.path = q.Text(6);
  r.change.summary = q.Text(7);
  Result<nlohmann::json> details = StoredJson(q.Text(8), "the details of " + what);
  if (!details.ok()) return details.error();
  r.change.details = std::move(details).value();
  r.created_at = q.Int(9);
  r.committed_at = q.IsNull(10) ? "" : q.Text(10);
  return r;
}

Result<std::vector<ChangeRecord>> RevisionStore::ListChanges(const Query& query) {
  static const RepoFiltered sql(std::string(kChangeColumns) +
                                "WHERE {repo} AND (?2 = '' OR kind = ?2) AND created_at >= ?3 "
                                "AND " HW_SINCE("changes", "changes.created_at", "?5", "?6") " ORDER BY id LIMIT ?4");
  HW_PREPARE(q, sql.For(query.repo));
  q.Bind(1, query.repo)
      .Bind(2, query.kind)
      .Bind(3, query.recorded_since)
      .Bind(4, query.limit > 0 ? query.limit : int64_t{-1})
      .Bind(5, query.committed_since)
      .Bind(6, query.after_revision);
  return Collect(q, "listing changes", ReadChange);
}

Result<std::vector<ChangeRecord>> RevisionStore::BrowseChanges(const ChangeBrowse& browse) {
  static const RepoFiltered sql(std::string(kChangeColumns) +
                                "WHERE {repo} AND (?2 = '' OR kind = ?2) "
                                "AND (?3 = '' OR impact = ?3) AND (?4 = 0 OR id < ?4) AND "
                                HW_SINCE("changes", "changes.created_at", "?6", "?7")
                                " ORDER BY id DESC LIMIT ?5");
  HW_PREPARE(q, sql.For(browse.repo));
  q.Bind(1, browse.repo)
      .Bind(2, browse.kind)
      .Bind(3, browse.impact)
      .Bind(4, browse.before_id)
      .Bind(5, browse.limit > 0 ? browse.limit : int64_t{-1})
      .Bind(6, browse.committed_since)
      .Bind(7, browse.after_revision);
  return Collect(q, "browsing changes", ReadChange);
}

Result<std::vector<ChangeRecord>> RevisionStore::ChangesOf(const std::string& repo,
                                                           const std::string& sha) {
  static const std::string sql =
      std::string(kChangeColumns) + "WHERE repo = ?1 AND sha = ?2 ORDER BY ordinal";
  HW_PREPARE(q, sql);
  q.Bind(1, repo).Bind(2, sha);
  return Collect(q, "listing changes of a revision", ReadChange);
}

Result<std::optional<ChangeRecord>> RevisionStore::GetChange(int64_t id) {
  static const std::string sql = std::string(kChangeColumns) + "WHERE id = ?1";
  HW_PREPARE(q, sql);
  q.Bind(1, id);
  return OptionalRow(q, "reading a change", ReadChange);
}

Result<std::optional<std::string>> RevisionStore::LastChangeRevision(const std::string& repo,
                                                                     std::string_view kind,
                                                                     const std::string& path) {
  HW_PREPARE(q,
             "SELECT c.sha FROM changes c JOIN revisions r ON r.repo = c.repo AND r.sha = c.sha "
             "WHERE c.repo = ?1 AND c.kind = ?2 AND c.path = ?3 AND r.rewritten_away = 0 "
             "ORDER BY r.ingest_order DESC LIMIT 1");
  q.Bind(1, repo).Bind(2, kind).Bind(3, path);
  return OptionalRow(q, "finding the last change", [](Statement& r) { return r.Text(0); });
}

constexpr const char kEstimateColumns[] =
    "SELECT e.repo, e.sha, e.estimate, e.params_total, e.params_active, e.kv_bytes_per_token, "
    "e.parameter_delta FROM estimates e ";

static EstimateRecord ReadEstimate(const Statement& q) {
  EstimateRecord r;
  r.repo = q.Text(0);
  r.sha = q.Text(1);
  r.estimate = nlohmann::json::parse(q.Text(2), nullptr, false);
  r.params_total = static_cast<uint64_t>(q.Int(3));
  r.params_active = static_cast<uint64_t>(q.Int(4));
  r.kv_bytes_per_token = q.Real(5);
  if (!q.IsNull(6)) r.parameter_delta = q.Int(6);
  return r;
}

Result<std::optional<EstimateRecord>> RevisionStore::GetEstimate(const std::string& repo,
                                                                 const std::string& sha) {
  static const std::string sql = std::string(kEstimateColumns) + "WHERE repo = ?1 AND sha = ?2";
  HW_PREPARE(q, sql);
  q.Bind(1, repo).Bind(2, sha);
  return OptionalRow(q, "reading estimate", ReadEstimate);
}

Result<std::optional<EstimateRecord>> RevisionStore::LatestEstimate(const std::string& repo) {
  static const std::string sql =
      std::string(kEstimateColumns) +
      "JOIN revisions r ON r.repo = e.repo AND r.sha = e.sha WHERE e.repo = ?1 "
      "AND r.rewritten_away = 0 ORDER BY r.ingest_order DESC LIMIT 1";
  HW_PREPARE(q, sql);
  q.Bind(1, repo);
  return OptionalRow(q, "reading the latest estimate", ReadEstimate);
}

}  // namespace hubwatch::store
