// Advisories: recording them with their revision (published at once, or held while a burst
// settles), publishing settled bursts, and reading them back.

#include "tracker/store/advisory_store.h"

#include <nlohmann/json.hpp>

#include "tracker/advisory/restamp.h"
#include "tracker/advisory/time_text.h"
#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

constexpr const char kInsertAdvisory[] =
    "INSERT INTO advisories (id, seq, repo, sha, change_id, kind, osv, published, modified, "
    "ingested_at) VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM advisories), ?2, ?3, ?4, "
    "?5, ?6, ?7, ?8, ?9)";
constexpr const char kInsertOutbox[] =
    "INSERT INTO outbox (advisory_id, target, created_at) VALUES (?1, ?2, ?3)";

constexpr const char kAdvisoryColumns[] =
    "SELECT id, seq, repo, sha, change_id, kind, osv, published, modified, withdrawn, "
    "ingested_at FROM advisories ";

Result<AdvisoryRecord> ReadAdvisory(const Statement& q) {
  AdvisoryRecord r;
  r.id = q.Text(0);
  r.seq = q.Int(1);
  r.repo = q.Text(2);
  r.sha = q.Text(3);
  r.change_id = q.Int(4);
  r.kind = q.Text(5);
  Result<nlohmann::json> osv = StoredJson(q.Text(6), "advisory " + r.id);
  if (!osv.ok()) return osv.error();
  if (!osv->is_object()) return Error::Io("store: advisory " + r.id + " is damaged: not an object");
  r.osv = std::move(osv).value();
  r.published = q.Text(7);
  r.modified = q.Text(8);
  r.withdrawn = q.OptionalText(9);
  if (!q.IsNull(10)) r.ingested_at = q.Int(10);
  return r;
}

}  // namespace

Status AdvisoryStore::RecordAdvisories(const RevisionIngest& in,
                                       const std::vector<int64_t>& change_ids) {
  const RevisionRecord& rev = in.revision;
  for (const NewAdvisory& a : in.advisories) {
    if (a.change_ordinal < 0 || static_cast<size_t>(a.change_ordinal) >= change_ids.size()) {
      return Error::InvalidInput("store: advisory " + a.id + " names no change of its revision");
    }
    const int64_t change_id = change_ids[static_cast<size_t>(a.change_ordinal)];
    const std::string kind(diff::KindName(in.changes[static_cast<size_t>(a.change_ordinal)].kind));
    if (in.settle_at) {
      HW_PREPARE(q,
                 "INSERT INTO held_advisories (id, repo, sha, change_id, kind, osv, targets, "
                 "ingested_at, settle_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
      HW_TRY(q.Bind(1, a.id)
                 .Bind(2, rev.repo)
                 .Bind(3, rev.sha)
                 .Bind(4, change_id)
                 .Bind(5, kind)
                 .Bind(6, DumpJson(a.osv))
                 .Bind(7, DumpJson(nlohmann::json(a.targets)))
                 .Bind(8, rev.first_seen_at)
                 .Bind(9, *in.settle_at)
                 .Run("holding advisory " + a.id));
      continue;
    }
    HW_TRY(InsertPublished({a.id, rev.repo, rev.sha, change_id, kind, DumpJson(a.osv), a.published,
                            a.modified, rev.first_seen_at, a.targets, rev.first_seen_at}));
  }
  if (in.settle_at) {  // the burst goes on: everything held for the repo waits for this commit
    HW_PREPARE(q, "UPDATE held_advisories SET settle_at = ?2 WHERE repo = ?1 AND settle_at < ?2");
    HW_TRY(q.Bind(1, rev.repo).Bind(2, *in.settle_at).Run("extending the burst"));
  }
  return Status::Ok();
}

Status AdvisoryStore::ForgetRepo(const std::string& repo) {
  // Advisories reference changes, which reference revisions: the caller deletes those after.
  HW_PREPARE(h, "DELETE FROM held_advisories WHERE repo = ?1");
  HW_TRY(h.Bind(1, repo).Run("removing held advisories"));
  HW_PREPARE(a, "DELETE FROM advisories WHERE repo = ?1");
  return a.Bind(1, repo).Run("removing advisories");
}

Status AdvisoryStore::InsertPublished(const PublishedRow& row) {
  HW_PREPARE(q, kInsertAdvisory);
  HW_TRY(q.Bind(1, row.id)
             .Bind(2, row.repo)
             .Bind(3, row.sha)
             .Bind(4, row.change_id)
             .Bind(5, row.kind)
             .Bind(6, row.osv)
             .Bind(7, row.published)
             .Bind(8, row.modified)
             .Bind(9, row.ingested_at)
             .Run("publishing advisory " + row.id));
  for (const std::string& target : row.targets) {
    HW_PREPARE(o, kInsertOutbox);
    HW_TRY(o.Bind(1, row.id).Bind(2, target).Bind(3, row.queued_at).Run("queueing delivery"));
  }
  return Status::Ok();
}

Result<bool> AdvisoryStore::HasHeldAdvisories(const std::string& repo) {
  HW_PREPARE(q, "SELECT 1 FROM held_advisories WHERE repo = ?1 LIMIT 1");
  return q.Bind(1, repo).Step("checking held advisories");
}

Result<Publication> AdvisoryStore::PublishSettled(const std::string& repo, int64_t now) {
  Publication out;
  Status s = db_.Atomically([&]() -> Status {
    HW_PREPARE(w, "SELECT MAX(settle_at) FROM held_advisories WHERE repo = ?1");
    Result<bool> row = w.Bind(1, repo).Step("reading the burst");
    if (!row.ok()) return row.error();
    if (w.IsNull(0)) return Status::Ok();  // nothing held
    if (const int64_t settle_at = w.Int(0); settle_at > now) {
      out.next_settle_at = settle_at;
      return Status::Ok();
    }
    struct Held {
      std::string id, sha, kind, osv, targets;
      int64_t change_id = 0, ingested_at = 0;
    };
    HW_PREPARE(q,
               "SELECT id, sha, change_id, kind, osv, targets, ingested_at FROM held_advisories "
               "WHERE repo = ?1 ORDER BY ingested_at, rowid");
    q.Bind(1, repo);
    Result<std::vector<Held>> held = Collect(q, "reading held advisories", [](Statement& r) {
      return Held{r.Text(0), r.Text(1), r.Text(3), r.Text(4), r.Text(5), r.Int(2), r.Int(6)};
    });
    if (!held.ok()) return held.error();
    const std::string when = advisory::Rfc3339(now);
    for (const Held& h : *held) {
      Result<nlohmann::json> stored = StoredJson(h.osv, "held advisory " + h.id);
      if (!stored.ok()) return stored.error();
      std::optional<nlohmann::json> osv =
          advisory::Restamp(std::move(stored).value(), now, h.ingested_at);
      if (!osv) return Error::Io("store: held advisory " + h.id + " is damaged: not an OSV record");
      Result<std::vector<std::string>> targets =
          StoredStringList(h.targets, "the delivery targets of held advisory " + h.id);
      if (!targets.ok()) return targets.error();
      HW_TRY(InsertPublished({h.id, repo, h.sha, h.change_id, h.kind, DumpJson(*osv), when, when,
                              h.ingested_at, *targets, now}));
    }
    HW_PREPARE(d, "DELETE FROM held_advisories WHERE repo = ?1");
    HW_TRY(d.Bind(1, repo).Run("releasing held advisories"));
    out.published = static_cast<int64_t>(held->size());
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  return out;
}

Result<std::vector<HeldBurst>> AdvisoryStore::HeldBursts() {
  HW_PREPARE(q,
             "SELECT repo, MAX(settle_at), COUNT(*) FROM held_advisories GROUP BY repo "
             "ORDER BY 2, 1");
  return Collect(q, "listing held bursts", [](Statement& r) {
    return HeldBurst{r.Text(0), r.Int(1), r.Int(2)};
  });
}

Result<std::vector<AdvisoryRecord>> AdvisoryStore::ListAdvisories(const Query& query) {
  static const RepoFiltered sql(std::string(kAdvisoryColumns) +
                                "WHERE {repo} AND (?2 = '' OR kind = ?2) AND seq > ?3 "
                                "AND modified >= ?4 AND " HW_SINCE("advisories", "CAST(strftime('%s', advisories.published) AS INTEGER)", "?6", "?7") " "
                                "AND (?8 = '' OR (withdrawn IS NULL AND " HW_HOLDS("advisories", "?8") ")) "
                                "ORDER BY seq LIMIT ?5");
  HW_PREPARE(q, sql.For(query.repo));
  q.Bind(1, query.repo)
      .Bind(2, query.kind)
      .Bind(3, query.after_seq)
      .Bind(4, query.modified_since)
      .Bind(5, query.limit > 0 ? query.limit : int64_t{-1})
      .Bind(6, query.committed_since)
      .Bind(7, query.after_revision)
      .Bind(8, query.affects);
  return Collect(q, "listing advisories", ReadAdvisory);
}

Result<std::optional<AdvisoryRecord>> AdvisoryStore::GetAdvisory(const std::string& id) {
  static const std::string sql = std::string(kAdvisoryColumns) + "WHERE id = ?1";
  HW_PREPARE(q, sql);
  q.Bind(1, id);
  return OptionalRow(q, "reading advisory", ReadAdvisory);
}

Result<int64_t> AdvisoryStore::MaxAdvisorySeq() {
  HW_PREPARE(q, "SELECT COALESCE(MAX(seq), 0) FROM advisories");
  Result<bool> row = q.Step("reading the advisory sequence");
  if (!row.ok()) return row.error();
  return *row ? q.Int(0) : int64_t{0};
}

// Records are read back through GetAdvisory, so the table keeps one row reader.
Result<std::vector<AdvisoryRecord>> AdvisoryStore::ReadAll(Result<std::vector<std::string>> ids) {
  if (!ids.ok()) return ids.error();
  std::vector<AdvisoryRecord> out;
  out.reserve(ids->size());
  for (const std::string& id : *ids) {
    Result<std::optional<AdvisoryRecord>> a = GetAdvisory(id);
    if (!a.ok()) return a.error();
    if (a->has_value()) out.push_back(std::move(**a));
  }
  return out;
}

Result<std::vector<AdvisoryRecord>> AdvisoryStore::RecentAdvisories(const Query& query) {
  static const RepoFiltered sql(
      "SELECT id FROM advisories WHERE {repo} AND (?2 = '' OR kind = ?2) "
      "ORDER BY seq DESC LIMIT ?3");
  HW_PREPARE(q, sql.For(query.repo));
  q.Bind(1, query.repo).Bind(2, query.kind).Bind(3, query.limit > 0 ? query.limit : -1);
  return ReadAll(Column0(q, "listing recent advisories"));
}

Result<int64_t> AdvisoryStore::CountAffecting(const std::string& repo, const std::string& commit) {
  HW_PREPARE(q,
             "SELECT COUNT(*) FROM advisories a WHERE a.repo = ?1 AND a.withdrawn IS NULL AND " HW_HOLDS(
                 "a", "?2"));
  q.Bind(1, repo).Bind(2, commit);
  Result<bool> row = q.Step("counting the advisories affecting a revision");
  if (!row.ok()) return row.error();
  return *row ? q.Int(0) : int64_t{0};
}

Result<std::vector<AdvisoryRecord>> AdvisoryStore::AdvisoriesAffecting(
    const AffectingQuery& query) {
  HW_PREPARE(q,
             "SELECT a.id FROM advisories a WHERE a.repo = ?1 AND a.withdrawn IS NULL "
             "AND a.seq > ?3 AND (?2 = '' OR " HW_HOLDS("a", "?2") ") ORDER BY a.seq LIMIT ?4");
  q.Bind(1, query.repo)
      .Bind(2, query.commit)
      .Bind(3, query.after_seq)
      .Bind(4, query.limit > 0 ? query.limit : -1);
  return ReadAll(Column0(q, "matching advisories to a commit"));
}

}  // namespace hubwatch::store
