#pragma once

// Thin RAII over sqlite3 prepared statements, internal to the store: bind by position, step,
// read columns, reset on destruction so a cached statement is ready for its next use.

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::store {

// A store error from an SQLite result code, naming what was being done.
Error SqliteError(sqlite3* db, int rc, std::string_view doing);

class Statement {
 public:
  // Borrows a prepared statement owned by the store's cache.
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int i, int64_t v) {
    Check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Statement& Bind(int i, double v) {
    Check(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Statement& Bind(int i, std::string_view v) {
    Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& BindBlob(int i, std::string_view v) {
    Check(sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Statement& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Statement& BindOptional(int i, const std::optional<std::string>& v) {
    if (v) return Bind(i, std::string_view(*v));
    Check(sqlite3_bind_null(stmt_, i));
    return *this;
  }
  Statement& BindOptional(int i, const std::optional<int64_t>& v) {
    if (v) return Bind(i, *v);
    Check(sqlite3_bind_null(stmt_, i));
    return *this;
  }
  // Takes the int as it comes (an HTTP status): converting it to std::optional<int64_t> first
  // trips gcc 12's -Wmaybe-uninitialized at -O2.
  Statement& BindOptional(int i, const std::optional<int>& v) {
    if (v) return Bind(i, static_cast<int64_t>(*v));
    Check(sqlite3_bind_null(stmt_, i));
    return *this;
  }

  // One step: true with a row, false when done; errors (including a failed bind) as Error.
  Result<bool> Step(std::string_view doing) {
    if (bind_rc_ != SQLITE_OK) return SqliteError(db_, bind_rc_, doing);
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqliteError(db_, rc, doing);
  }
  // Runs a statement that returns no rows.
  Status Run(std::string_view doing) {
    Result<bool> r = Step(doing);
    if (!r.ok()) return r.error();
    return Status::Ok();
  }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  std::string Blob(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    return p ? std::string(static_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  std::optional<std::string> OptionalText(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Text(col);
  }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int bind_rc_ = SQLITE_OK;
};

}  // namespace hubwatch::store
