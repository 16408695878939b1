#include "tracker/store/change_pages.h"

#include <limits>

#include "tracker/store/connection.h"

namespace hubwatch::store {

Result<std::vector<ChangeKey>> ChangePages::Newest(const ChangeSearch& s) {
  // "after a revision" stays HW_SINCE's subquery: it needs a repo, whose changes are few.
  static const RepoFiltered sql(
      "SELECT id, committed_at FROM changes WHERE {repo} AND (?2 = '' OR kind = ?2) "
      "AND (?3 = '' OR impact = ?3) AND committed_at >= ?4 AND (committed_at, id) < (?5, ?6) "
      "AND " HW_SINCE("changes", "0", "0", "?7") " ORDER BY committed_at DESC, id DESC LIMIT ?8");
  HW_PREPARE(q, sql.For(s.repo));
  const bool from_newest = s.before.id == 0;
  q.Bind(1, s.repo)
      .Bind(2, s.kind)
      .Bind(3, s.impact)
      .Bind(4, s.committed_since)
      .Bind(5, from_newest ? std::numeric_limits<int64_t>::max() : s.before.committed_at)
      .Bind(6, from_newest ? std::numeric_limits<int64_t>::max() : s.before.id)
      .Bind(7, s.after_revision)
      .Bind(8, s.limit);
  return Collect(q, "paging changes", [](Statement& r) { return ChangeKey{r.Int(0), r.Int(1)}; });
}

Result<std::vector<int64_t>> ChangePages::OfRepo(const Query& query, int64_t after_id) {
  // clang-format off
  static const std::string sql =
      "SELECT id FROM changes WHERE repo = ?1 AND id > ?2 AND (?3 = '' OR kind = ?3) "
      "AND created_at >= ?4 AND committed_at >= ?5 AND "
      HW_SINCE("changes", "0", "0", "?6") " ORDER BY id LIMIT ?7";
  // clang-format on
  HW_PREPARE(q, sql);
  q.Bind(1, query.repo)
      .Bind(2, after_id)
      .Bind(3, query.kind)
      .Bind(4, query.recorded_since)
      .Bind(5, query.committed_since)
      .Bind(6, query.after_revision)
      .Bind(7, query.limit);
  return Collect(q, "paging a repo's changes", [](Statement& r) { return r.Int(0); });
}

}  // namespace hubwatch::store
