#pragma once

// Internals shared by the .cc files of tracker/store: the HW_TRY / HW_PREPARE helpers over a
// facade's `Database& db_`, JSON column helpers and Collect. Include only from tracker/store/*.cc.

#include <sqlite3.h>

#include <cassert>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tracker/store/database.h"
#include "tracker/store/sqlite_statement.h"

namespace hubwatch::store {

#define HW_TRY(expr)                                 \
  do {                                               \
    Status hw_status_ = (expr);                      \
    if (!hw_status_.ok()) return hw_status_.error(); \
  } while (0)

// Declares Statement `var` for `sql` (which must outlive the Database) from the Database `db_`
// in scope; returns the error when preparing fails.
#define HW_PREPARE(var, sql)                           \
  Result<sqlite3_stmt*> var##_stmt = db_.Prepare(sql); \
  if (!var##_stmt.ok()) return var##_stmt.error();     \
  Statement var(db_.handle(), *var##_stmt)

// The two texts of a query that may be narrowed to one repo: `sql` with "{repo}" read as
// "repo = ?1" (by the repo's index) or as "?1 = ''" (every repo). One text with
// "(?1 = '' OR repo = ?1)" kept SQLite off the repo index, a statement's plan being made once for
// both cases: a repo's newest change took 13 ms (every change scanned newest first) instead of
// well under one.
class RepoFiltered {
 public:
  explicit RepoFiltered(const std::string& sql)
      : one_(Substitute(sql, "repo = ?1")), every_(Substitute(sql, "?1 = ''")) {}
  const std::string& For(const std::string& repo) const { return repo.empty() ? every_ : one_; }

 private:
  static std::string Substitute(std::string sql, std::string_view with) {
    const size_t at = sql.find("{repo}");
    assert(at != std::string::npos && "a RepoFiltered query names {repo}");
    sql.replace(at, 6, with);
    return sql;
  }
  std::string one_, every_;
};

// JSON text for a column: invalid UTF-8 replaced (never an exception), compact.
std::string DumpJson(const nlohmann::json& value);

// JSON the store wrote, read back. A column that does not hold what the store writes there
// (damaged on disk, or written by hand) is an Io error "store: <what> is damaged: ...", never
// an exception and never a silent default.
Result<nlohmann::json> StoredJson(const std::string& text, std::string_view what);
// A JSON array of strings (refs, parents, authors, kinds, targets).
Result<std::vector<std::string>> StoredStringList(const std::string& text, std::string_view what);

template <class T>
struct RowOf {
  using type = T;
};
template <class T>
struct RowOf<Result<T>> {
  using type = T;
};

// Steps `q` to the end, reading each row with `read`, which returns a row or a Result of one
// (the first error ends the walk).
template <class Read>
auto Collect(Statement& q, std::string_view doing, Read read)
    -> Result<std::vector<typename RowOf<decltype(read(q))>::type>> {
  using Row = typename RowOf<decltype(read(q))>::type;
  std::vector<Row> out;
  while (true) {
    Result<bool> row = q.Step(doing);
    if (!row.ok()) return row.error();
    if (!*row) return out;
    if constexpr (std::is_same_v<decltype(read(q)), Row>) {
      out.push_back(read(q));
    } else {
      Result<Row> r = read(q);
      if (!r.ok()) return r.error();
      out.push_back(std::move(r).value());
    }
  }
}

// The text of column 0 of every row.
inline Result<std::vector<std::string>> Column0(Statement& q, std::string_view doing) {
  return Collect(q, doing, [](Statement& r) { return r.Text(0); });
}

// Query's "since" over a table with repo and sha columns: committed at or after `time` (0: any),
// or ingested after revision `after` ('': any) and not rewritten away. A row whose revision is
// not stored (a derivative's advisory) is never "since" a revision, and for a time counts as
// committed at `fallback` (an SQL expression of the row).
#define HW_SINCE(table, fallback, time, after)                                                 \
  "(" time " = 0 OR COALESCE((SELECT COALESCE(CAST(strftime('%s', NULLIF(r.authored_at, '')) " \
  "AS INTEGER), r.first_seen_at) FROM revisions r WHERE r.repo = " table ".repo AND r.sha = "   \
  table ".sha), " fallback ") >= " time ") AND (" after " = '' OR EXISTS (SELECT 1 " \
  "FROM revisions r WHERE r.repo = " table ".repo AND r.sha = " table ".sha AND "            \
  "r.rewritten_away = 0 AND r.ingest_order > (SELECT p.ingest_order FROM revisions p WHERE "  \
  "p.repo = " table ".repo AND p.sha = " after ")))"

// Whether the GIT range of advisory row `table` holds revision `commit` of its repo, in ingest
// order: introduced <= commit < fixed. fixed is the advisory's own revision (its sha);
// introduced is read from the OSV record ("0" or unknown: the start). An unknown commit: no.
#define HW_HOLDS(table, commit)                                                                \
  "(SELECT f.ingest_order FROM revisions f WHERE f.repo = " table ".repo AND f.sha = " table  \
  ".sha) > (SELECT c.ingest_order FROM revisions c WHERE c.repo = " table ".repo AND c.sha = " \
  commit ") AND COALESCE((SELECT i.ingest_order FROM revisions i WHERE i.repo = " table       \
  ".repo AND i.sha = json_extract(" table ".osv, '$.affected[0].ranges[0].events[0]."         \
  "introduced')), 0) <= (SELECT c.ingest_order FROM revisions c WHERE c.repo = " table        \
  ".repo AND c.sha = " commit ")"

// SQL: the ingest order of revision ?2 of repo ?1 (NULL when unknown).
#define HW_PIN_ORDER "(SELECT ingest_order FROM revisions WHERE repo = ?1 AND sha = ?2)"

// The row a getter reads: nullopt when the statement has no row, else read(q).
template <class Read>
auto OptionalRow(Statement& q, std::string_view doing, Read read)
    -> Result<std::optional<typename RowOf<decltype(read(q))>::type>> {
  using Row = typename RowOf<decltype(read(q))>::type;
  Result<bool> row = q.Step(doing);
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<Row>();
  if constexpr (std::is_same_v<decltype(read(q)), Row>) {
    return std::optional<Row>(read(q));
  } else {
    Result<Row> r = read(q);
    if (!r.ok()) return r.error();
    return std::optional<Row>(std::move(r).value());
  }
}

}  // namespace hubwatch::store
