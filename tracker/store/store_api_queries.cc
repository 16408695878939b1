// Store queries for the HTTP API (daemon/api): read-only. Records are read back through the
// getters of sqlite_store.cc (GetAdvisory, ChangesOf), so each table keeps one row reader.

#include <sqlite3.h>

#include "tracker/store/sqlite_statement.h"
#include "tracker/store/store.h"
#include "tracker/store/store_impl.h"

namespace hubwatch::store {
namespace {

// The text of column 0 of every row.
Result<std::vector<std::string>> Column0(Statement& q, std::string_view doing) {
  std::vector<std::string> out;
  while (true) {
    Result<bool> row = q.Step(doing);
    if (!row.ok()) return row.error();
    if (!*row) return out;
    out.push_back(q.Text(0));
  }
}

// LIKE-free prefix match: sha >= prefix AND sha < prefix with its last character bumped.
// `prefix` is lower-case hex, so the bump stays in ASCII.
std::string PrefixEnd(std::string prefix) {
  if (!prefix.empty()) prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

// The ingest order of revision `sha` of repo ?1 (NULL when unknown).
#define HW_PIN_ORDER "(SELECT ingest_order FROM revisions WHERE repo = ?1 AND sha = ?2)"

}  // namespace

Result<std::vector<std::string>> Store::FindRevisionShas(const std::string& repo,
                                                         const std::string& prefix, int64_t limit) {
  HW_PREPARE(q,
             "SELECT sha FROM revisions WHERE repo = ?1 AND sha >= ?2 AND sha < ?3 "
             "ORDER BY sha LIMIT ?4");
  q.Bind(1, repo).Bind(2, prefix).Bind(3, PrefixEnd(prefix)).Bind(4, limit > 0 ? limit : -1);
  return Column0(q, "finding revisions by prefix");
}

Result<std::vector<ChangeRecord>> Store::ChangesAfter(const std::string& repo,
                                                      const std::string& sha,
                                                      const std::string& kind) {
  std::vector<std::string> shas;
  {
    HW_PREPARE(q,
               "SELECT sha FROM revisions WHERE repo = ?1 AND rewritten_away = 0 "
               "AND ingest_order > " HW_PIN_ORDER " ORDER BY ingest_order");
    q.Bind(1, repo).Bind(2, sha);
    Result<std::vector<std::string>> found = Column0(q, "listing revisions after a pin");
    if (!found.ok()) return found.error();
    shas = std::move(found).value();
  }
  std::vector<ChangeRecord> out;
  for (const std::string& s : shas) {
    Result<std::vector<ChangeRecord>> changes = ChangesOf(repo, s);
    if (!changes.ok()) return changes.error();
    for (ChangeRecord& c : *changes) {
      if (kind.empty() || diff::KindName(c.change.kind) == kind) out.push_back(std::move(c));
    }
  }
  return out;
}

Result<Store::ChangeTally> Store::TallyChangesAfter(const std::string& repo, const std::string& sha,
                                                    const std::string& kind) {
  HW_PREPARE(q,
             "SELECT c.impact, COUNT(*) FROM changes c JOIN revisions r "
             "ON r.repo = c.repo AND r.sha = c.sha WHERE c.repo = ?1 AND r.rewritten_away = 0 "
             "AND r.ingest_order > " HW_PIN_ORDER
             " AND (?3 = '' OR c.kind = ?3) GROUP BY c.impact");
  q.Bind(1, repo).Bind(2, sha).Bind(3, kind);
  ChangeTally tally;
  while (true) {
    Result<bool> row = q.Step("counting changes after a pin");
    if (!row.ok()) return row.error();
    if (!*row) return tally;
    const std::string impact = q.Text(0);
    int64_t& slot = impact == "breaking"     ? tally.breaking
                    : impact == "behavioral" ? tally.behavioral
                                             : tally.cosmetic;
    slot += q.Int(1);
  }
}

Result<std::optional<Store::LastChange>> Store::LatestChange(const std::string& repo,
                                                             const std::string& kind) {
  HW_PREPARE(q,
             "SELECT c.sha, c.kind, r.authored_at, r.first_seen_at FROM changes c "
             "JOIN revisions r ON r.repo = c.repo AND r.sha = c.sha "
             "WHERE c.repo = ?1 AND (?2 = '' OR c.kind = ?2) AND c.impact != 'cosmetic' "
             "AND r.rewritten_away = 0 ORDER BY r.ingest_order DESC, c.ordinal LIMIT 1");
  q.Bind(1, repo).Bind(2, kind);
  Result<bool> row = q.Step("finding the latest change");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<LastChange>();
  return std::optional<LastChange>(LastChange{q.Text(0), q.Text(1), q.Text(2), q.Int(3)});
}

Result<int64_t> Store::MaxAdvisorySeq() {
  HW_PREPARE(q, "SELECT COALESCE(MAX(seq), 0) FROM advisories");
  Result<bool> row = q.Step("reading the advisory sequence");
  if (!row.ok()) return row.error();
  return *row ? q.Int(0) : int64_t{0};
}

// Reads the advisories whose ids a statement returned, in its order.
static Result<std::vector<AdvisoryRecord>> ReadAdvisories(Store& store,
                                                          Result<std::vector<std::string>> ids) {
  if (!ids.ok()) return ids.error();
  std::vector<AdvisoryRecord> out;
  out.reserve(ids->size());
  for (const std::string& id : *ids) {
    Result<std::optional<AdvisoryRecord>> a = store.GetAdvisory(id);
    if (!a.ok()) return a.error();
    if (a->has_value()) out.push_back(std::move(**a));
  }
  return out;
}

Result<std::vector<AdvisoryRecord>> Store::RecentAdvisories(const Query& query) {
  HW_PREPARE(q,
             "SELECT id FROM advisories WHERE (?1 = '' OR repo = ?1) AND (?2 = '' OR kind = ?2) "
             "ORDER BY seq DESC LIMIT ?3");
  q.Bind(1, query.repo).Bind(2, query.kind).Bind(3, query.limit > 0 ? query.limit : -1);
  return ReadAdvisories(*this, Column0(q, "listing recent advisories"));
}

Result<std::vector<AdvisoryRecord>> Store::AdvisoriesAffecting(const AffectingQuery& query) {
  // fixed is the advisory's own revision (a.sha); introduced is read from the OSV record.
  HW_PREPARE(q,
             "SELECT a.id FROM advisories a JOIN revisions f ON f.repo = a.repo AND f.sha = a.sha "
             "WHERE a.repo = ?1 AND a.withdrawn IS NULL AND a.seq > ?3 AND (?2 = '' OR ("
             "f.ingest_order > " HW_PIN_ORDER
             " AND COALESCE((SELECT i.ingest_order FROM revisions i WHERE i.repo = a.repo AND "
             "i.sha = json_extract(a.osv, '$.affected[0].ranges[0].events[0].introduced')), 0) "
             "<= " HW_PIN_ORDER ")) ORDER BY a.seq LIMIT ?4");
  q.Bind(1, query.repo)
      .Bind(2, query.commit)
      .Bind(3, query.after_seq)
      .Bind(4, query.limit > 0 ? query.limit : -1);
  return ReadAdvisories(*this, Column0(q, "matching advisories to a commit"));
}

Result<std::vector<std::string>> Store::ReposWithRevision(const std::string& sha) {
  HW_PREPARE(q, "SELECT repo FROM revisions WHERE sha = ?1 ORDER BY repo");
  q.Bind(1, sha);
  return Column0(q, "finding repos by revision");
}

#undef HW_PIN_ORDER

}  // namespace hubwatch::store
