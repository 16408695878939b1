#include "tracker/store/revision_queries.h"

#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

// LIKE-free prefix match: sha >= prefix AND sha < prefix with its last character bumped.
// `prefix` is lower-case hex, so the bump stays in ASCII.
std::string PrefixEnd(std::string prefix) {
  if (!prefix.empty()) prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

}  // namespace

Result<std::vector<std::string>> RevisionQueries::FindRevisionShas(const std::string& repo,
                                                                   const std::string& prefix,
                                                                   int64_t limit) {
  HW_PREPARE(q,
             "SELECT sha FROM revisions WHERE repo = ?1 AND sha >= ?2 AND sha < ?3 "
             "ORDER BY sha LIMIT ?4");
  q.Bind(1, repo).Bind(2, prefix).Bind(3, PrefixEnd(prefix)).Bind(4, limit > 0 ? limit : -1);
  return Column0(q, "finding revisions by prefix");
}

Result<std::vector<ChangeRecord>> RevisionQueries::ChangesAfter(const std::string& repo,
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
    Result<std::vector<ChangeRecord>> changes = revisions_.ChangesOf(repo, s);
    if (!changes.ok()) return changes.error();
    for (ChangeRecord& c : *changes) {
      if (kind.empty() || diff::KindName(c.change.kind) == kind) out.push_back(std::move(c));
    }
  }
  return out;
}

Result<ChangeTally> RevisionQueries::TallyChangesAfter(const std::string& repo,
                                                       const std::string& sha,
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
    const std::optional<diff::Impact> impact = diff::ParseImpact(q.Text(0));
    if (!impact) return Error::Io("store: a change of " + repo + " is damaged: not a known impact");
    int64_t& slot = impact == diff::Impact::kBreaking     ? tally.breaking
                    : impact == diff::Impact::kBehavioral ? tally.behavioral
                                                          : tally.cosmetic;
    slot += q.Int(1);
  }
}

Result<std::optional<LastChange>> RevisionQueries::LatestChange(const std::string& repo,
                                                                const std::string& kind) {
  HW_PREPARE(q,
             "SELECT c.sha, c.kind, r.authored_at, r.first_seen_at FROM changes c "
             "JOIN revisions r ON r.repo = c.repo AND r.sha = c.sha "
             "WHERE c.repo = ?1 AND (?2 = '' OR c.kind = ?2) AND c.impact != 'cosmetic' "
             "AND r.rewritten_away = 0 ORDER BY r.ingest_order DESC, c.ordinal LIMIT 1");
  q.Bind(1, repo).Bind(2, kind);
  return OptionalRow(q, "finding the latest change", [](Statement& r) {
    return LastChange{r.Text(0), r.Text(1), r.Text(2), r.Int(3)};
  });
}

Result<std::vector<std::string>> RevisionQueries::ReposWithRevision(const std::string& sha) {
  HW_PREPARE(q, "SELECT repo FROM revisions WHERE sha = ?1 ORDER BY repo");
  q.Bind(1, sha);
  return Column0(q, "finding repos by revision");
}

Result<HistoryStamp> RevisionQueries::GetHistoryStamp(const std::string& repo) {
  HW_PREPARE(q,
             "SELECT (SELECT count(*) FROM revisions WHERE repo = ?1), "
             "(SELECT count(*) FROM revisions WHERE repo = ?1 AND rewritten_away = 1), "
             "(SELECT sha FROM revisions WHERE repo = ?1 ORDER BY ingest_order DESC LIMIT 1), "
             "(SELECT sha FROM revisions WHERE repo = ?1 AND rewritten_away = 0 "
             "ORDER BY ingest_order DESC LIMIT 1), "
             "(SELECT ifnull(max(id), 0) FROM changes WHERE repo = ?1)");
  q.Bind(1, repo);
  Result<bool> row = q.Step("reading the history stamp");
  if (!row.ok()) return row.error();
  HistoryStamp stamp;
  if (!*row) return stamp;
  stamp.revisions = q.Int(0);
  stamp.rewritten_away = q.Int(1);
  stamp.newest_sha = q.OptionalText(2).value_or("");
  stamp.head_sha = q.OptionalText(3).value_or("");
  stamp.newest_change = q.Int(4);
  return stamp;
}

}  // namespace hubwatch::store
