#pragma once

// Store internals shared by the .cc files that implement Store's methods (sqlite_store.cc and
// the per-domain files beside it): the connection with its statement cache, transactions, and
// the HW_TRY / HW_PREPARE helpers. Not for use outside tracker/store/.

#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "tracker/store/sqlite_statement.h"
#include "tracker/store/store.h"

namespace hubwatch::store {

class Store::Impl {
 public:
  explicit Impl(sqlite3* db) : db_(db) {}
  ~Impl() {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close(db_);
  }

  sqlite3* db() const { return db_; }

  // A cached prepared statement for `sql`, which must outlive the store (a literal or a
  // static string): cached by its address and length.
  Result<sqlite3_stmt*> Prepare(std::string_view sql) {
    auto it = cache_.find(sql);
    if (it == cache_.end()) {
      sqlite3_stmt* stmt = nullptr;
      const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                        SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
      if (rc != SQLITE_OK) return SqliteError(db_, rc, "preparing a statement");
      it = cache_.emplace(sql, stmt).first;
    }
    return it->second;
  }

  Status Exec(const char* sql, std::string_view doing) {
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, doing);
    return Status::Ok();
  }

  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT; rolls back when it fails. Inside an open
  // transaction (a Store::Batch) it is a savepoint instead: a failed body undoes only its own
  // writes, and what succeeded becomes durable when the outer transaction commits.
  template <class Body>
  Status Transaction(Body&& body) {
    if (!sqlite3_get_autocommit(db_)) {
      if (Status s = Exec("SAVEPOINT hw_nested", "starting a savepoint"); !s.ok()) return s;
      Status s = body();
      if (!s.ok()) (void)Exec("ROLLBACK TO hw_nested", "rolling back a savepoint");
      (void)Exec("RELEASE hw_nested", "releasing a savepoint");
      return s;
    }
    if (Status s = Exec("BEGIN IMMEDIATE", "starting a transaction"); !s.ok()) return s;
    Status s = body();
    if (s.ok()) s = Exec("COMMIT", "committing");
    if (!s.ok()) (void)Exec("ROLLBACK", "rolling back");
    return s;
  }

 private:
  sqlite3* db_;
  std::unordered_map<std::string_view, sqlite3_stmt*> cache_;
};

#define HW_TRY(expr)                                 \
  do {                                               \
    Status hw_status_ = (expr);                      \
    if (!hw_status_.ok()) return hw_status_.error(); \
  } while (0)

#define HW_PREPARE(var, sql)                              \
  Result<sqlite3_stmt*> var##_stmt = impl_->Prepare(sql); \
  if (!var##_stmt.ok()) return var##_stmt.error();        \
  Statement var(impl_->db(), *var##_stmt)

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

}  // namespace hubwatch::store
