// Advisories: recording them with their revision (published at once, or held while a burst
// settles), publishing settled bursts, and reading them back.

#include <nlohmann/json.hpp>

#include "tracker/advisory/time_text.h"
#include "tracker/store/store.h"
#include "tracker/store/store_impl.h"

namespace hubwatch::store {
namespace {

using advisory::Rfc3339;

constexpr const char kInsertAdvisory[] =
    "INSERT INTO advisories (id, seq, repo, sha, change_id, kind, osv, published, modified, "
    "ingested_at) VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM advisories), ?2, ?3, ?4, "
    "?5, ?6, ?7, ?8, ?9)";
constexpr const char kInsertOutbox[] =
    "INSERT INTO outbox (advisory_id, target, created_at) VALUES (?1, ?2, ?3)";

}  // namespace

Status Store::RecordAdvisories(const RevisionIngest& in, const std::vector<int64_t>& change_ids) {
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

Status Store::InsertPublished(const PublishedRow& row) {
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

Result<bool> Store::HasHeldAdvisories(const std::string& repo) {
  HW_PREPARE(q, "SELECT 1 FROM held_advisories WHERE repo = ?1 LIMIT 1");
  return q.Bind(1, repo).Step("checking held advisories");
}

Result<Store::Publication> Store::PublishSettled(const std::string& repo, int64_t now) {
  Publication out;
  Status s = impl_->Transaction([&]() -> Status {
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
    const std::string when = Rfc3339(now);
    for (const Held& h : *held) {
      Result<nlohmann::json> osv = StoredJson(h.osv, "held advisory " + h.id);
      if (!osv.ok()) return osv.error();
      const auto specific = osv->is_object() ? osv->find("database_specific") : osv->end();
      if (!osv->is_object() || (specific != osv->end() && !specific->is_object())) {
        return Error::Io("store: held advisory " + h.id + " is damaged: not an OSV record");
      }
      (*osv)["published"] = when;
      (*osv)["modified"] = when;
      (*osv)["database_specific"]["ingested_at"] = Rfc3339(h.ingested_at);
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

Result<std::vector<Store::HeldBurst>> Store::HeldBursts() {
  HW_PREPARE(q,
             "SELECT repo, MAX(settle_at), COUNT(*) FROM held_advisories GROUP BY repo "
             "ORDER BY 2, 1");
  return Collect(q, "listing held bursts", [](Statement& r) {
    return HeldBurst{r.Text(0), r.Int(1), r.Int(2)};
  });
}

constexpr const char kAdvisoryColumns[] =
    "SELECT id, seq, repo, sha, change_id, kind, osv, published, modified, withdrawn, "
    "ingested_at FROM advisories ";

static Result<AdvisoryRecord> ReadAdvisory(const Statement& q) {
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

Result<std::vector<AdvisoryRecord>> Store::ListAdvisories(const Query& query) {
  static const std::string sql = std::string(kAdvisoryColumns) +
                                 "WHERE (?1 = '' OR repo = ?1) AND (?2 = '' OR kind = ?2) "
                                 "AND seq > ?3 AND modified >= ?4 ORDER BY seq LIMIT ?5";
  HW_PREPARE(q, sql);
  q.Bind(1, query.repo)
      .Bind(2, query.kind)
      .Bind(3, query.since)
      .Bind(4, query.since_time)
      .Bind(5, query.limit > 0 ? query.limit : int64_t{-1});
  return Collect(q, "listing advisories", ReadAdvisory);
}

Result<std::optional<AdvisoryRecord>> Store::GetAdvisory(const std::string& id) {
  static const std::string sql = std::string(kAdvisoryColumns) + "WHERE id = ?1";
  HW_PREPARE(q, sql);
  q.Bind(1, id);
  Result<bool> row = q.Step("reading advisory");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<AdvisoryRecord>();
  Result<AdvisoryRecord> advisory = ReadAdvisory(q);
  if (!advisory.ok()) return advisory.error();
  return std::optional<AdvisoryRecord>(std::move(advisory).value());
}

}  // namespace hubwatch::store
