#include "tracker/store/derivative_evictions.h"

#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

Result<derivatives::Eviction> ReadEviction(const Statement& q) {
  derivatives::Eviction e;
  e.id = q.Text(0);
  const std::optional<derivatives::Relation> relation = derivatives::ParseRelation(q.Text(1));
  const std::optional<derivatives::EvictionReason> reason =
      derivatives::ParseEvictionReason(q.Text(2));
  if (!relation || !reason) {
    return Error::Io("store: the eviction of derivative " + e.id + " is damaged");
  }
  e.relation = *relation;
  e.reason = *reason;
  e.detail = q.Text(3);
  e.signals = {q.Int(4), q.Int(5), q.Text(6)};
  e.evicted_at = q.Int(7);
  return e;
}

}  // namespace

Status DerivativeEvictions::Evict(const std::string& upstream,
                                  const std::vector<derivatives::Eviction>& evicted, int64_t now) {
  if (evicted.empty()) return Status::Ok();
  return db_.Atomically([&]() -> Status {
    for (const derivatives::Eviction& e : evicted) {
      HW_PREPARE(d, "DELETE FROM derivatives WHERE upstream = ?1 AND id = ?2");
      HW_TRY(d.Bind(1, upstream).Bind(2, e.id).Run("evicting a derivative"));
      HW_PREPARE(q,
                 "INSERT INTO derivative_evictions (upstream, id, relation, reason, detail, "
                 "downloads, likes, created_at, evicted_at) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
      HW_TRY(q.Bind(1, upstream)
                 .Bind(2, e.id)
                 .Bind(3, derivatives::RelationName(e.relation))
                 .Bind(4, derivatives::EvictionReasonName(e.reason))
                 .Bind(5, e.detail)
                 .Bind(6, e.signals.downloads)
                 .Bind(7, e.signals.likes)
                 .Bind(8, e.signals.created_at)
                 .Bind(9, now)
                 .Run("recording an eviction"));
    }
    HW_PREPARE(t,
               "DELETE FROM derivative_evictions WHERE upstream = ?1 AND seq <= COALESCE(("
               "SELECT seq FROM derivative_evictions WHERE upstream = ?1 "
               "ORDER BY seq DESC LIMIT 1 OFFSET ?2), 0)");
    return t.Bind(1, upstream).Bind(2, kKept).Run("trimming evictions");
  });
}

Result<std::vector<derivatives::Eviction>> DerivativeEvictions::Recent(const std::string& upstream,
                                                                       int64_t limit) {
  HW_PREPARE(q,
             "SELECT id, relation, reason, detail, downloads, likes, created_at, evicted_at "
             "FROM derivative_evictions WHERE upstream = ?1 ORDER BY seq DESC LIMIT ?2");
  q.Bind(1, upstream).Bind(2, limit);
  return Collect(q, "listing evictions", ReadEviction);
}

}  // namespace hubwatch::store
