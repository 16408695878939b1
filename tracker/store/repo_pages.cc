#include "tracker/store/repo_pages.h"

#include <algorithm>
#include <array>

#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

// The filters a search uses, as bits of the statement cache's key.
constexpr unsigned kName = 1, kOwner = 2, kFamily = 4, kState = 8, kChanged = 16;
constexpr unsigned kFilterSets = 32;

// The query for one set of filters and one direction. A filter that is not asked for is left
// out of the text (not bound as "any"): SQLite plans a statement once, and "(?4 = '' OR
// family = ?4)" would keep it off the family index (connection.h, RepoFiltered).
std::string FindSql(unsigned filters, bool backward) {
  std::string sql = "SELECT id, family, COALESCE(last_change_at, 0) FROM repos WHERE ";
  sql += backward ? "id < ?7" : "id > ?7";
  if (filters & kName) sql += " AND instr(lower(id), ?1) > 0";
  if (filters & kOwner) sql += " AND id >= ?2 AND id < ?3";
  if (filters & kFamily) sql += " AND family = ?4";
  if (filters & kState) sql += " AND state = ?5";
  if (filters & kChanged) sql += " AND last_change_at >= ?6";
  sql += backward ? " ORDER BY id DESC LIMIT ?8" : " ORDER BY id LIMIT ?8";
  return sql;
}

// Every text FindSql makes, built once (Database::Prepare keeps statements by their text, which
// must outlive it).
const std::string& CachedFindSql(unsigned filters, bool backward) {
  static const std::array<std::string, 2 * kFilterSets> texts = [] {
    std::array<std::string, 2 * kFilterSets> out;
    for (unsigned f = 0; f < kFilterSets; ++f) {
      out[f] = FindSql(f, false);
      out[kFilterSets + f] = FindSql(f, true);
    }
    return out;
  }();
  return texts[(backward ? kFilterSets : 0) + filters];
}

std::string AsciiLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace

Result<std::vector<FamilyCount>> RepoPages::Families(const std::string& after, int64_t limit) {
  HW_PREPARE(q,
             "SELECT family, repos FROM repo_families WHERE family > ?1 ORDER BY family "
             "LIMIT ?2");
  q.Bind(1, after).Bind(2, limit);
  return Collect(q, "listing the families", [](Statement& r) {
    return FamilyCount{r.Text(0), r.Int(1)};
  });
}

Result<int64_t> RepoPages::Count() {
  HW_PREPARE(q, "SELECT COALESCE(sum(repos), 0) FROM repo_families");
  Result<bool> row = q.Step("counting repos");
  if (!row.ok()) return row.error();
  return *row ? q.Int(0) : 0;
}

Result<std::vector<RepoKey>> RepoPages::Find(const RepoSearch& s) {
  const unsigned filters = (s.name.empty() ? 0u : kName) | (s.owner.empty() ? 0u : kOwner) |
                           (s.family.empty() ? 0u : kFamily) | (s.state.empty() ? 0u : kState) |
                           (s.changed_since > 0 ? kChanged : 0u);
  const bool backward = !s.before.empty();
  HW_PREPARE(q, CachedFindSql(filters, backward));
  // An owner's ids are those from "owner/" up to, not including, "owner0" ('0' follows '/').
  q.Bind(1, AsciiLower(s.name))
      .Bind(2, s.owner + "/")
      .Bind(3, s.owner + "0")
      .Bind(4, s.family)
      .Bind(5, s.state)
      .Bind(6, s.changed_since)
      .Bind(7, backward ? s.before : s.after)
      .Bind(8, s.limit);
  Result<std::vector<RepoKey>> keys = Collect(q, "finding repos", [](Statement& r) {
    return RepoKey{r.Text(0), r.Text(1), r.Int(2)};
  });
  if (keys.ok() && backward) std::reverse(keys->begin(), keys->end());
  return keys;
}

}  // namespace hubwatch::store
