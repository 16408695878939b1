#pragma once

// Database: hubwatch's SQLite connection (WAL, foreign keys, a busy timeout, prepared statements
// only) with its statement cache and transactions. Open() applies the migrations of
// schema/migrations/ in order, tracked by PRAGMA user_version, and refuses a database written by
// a newer hubwatch.
//
// Thread safety: one connection, used from one thread at a time. Several Databases (processes)
// may open the same file; writers wait up to the busy timeout.
// Prepare/Exec/handle are for the store facades (tracker/store/*.cc through connection.h).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "estimator/base/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace hubwatch::store {

struct StoreOptions {
  int busy_timeout_ms = 5000;
  // Tests: cap the database size (PRAGMA max_page_count) to provoke "disk full".
  std::optional<int64_t> max_page_count{};
  // The page cache's cap (PRAGMA cache_size=-N); unset: SQLite's default, 2,000 KiB.
  std::optional<int64_t> cache_kib{};
};

class Database {
 public:
  // The schema version this binary writes (the number of migrations).
  static int SchemaVersion();

  // Opens (creating if needed) the database at `path` (":memory:" for a private in-memory one).
  static Result<std::unique_ptr<Database>> Open(const std::string& path,
                                                const StoreOptions& options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs body() in one transaction, so that the writes of many callers share one commit (one
  // fsync): an Atomically inside it is a savepoint. Returns the BEGIN / COMMIT status; when it
  // is not ok nothing body wrote is kept (body does not run when BEGIN fails).
  // REQUIRES: not already inside a transaction on this connection.
  Status Batch(const std::function<void()>& body);
  // Whether a transaction is open: false inside a Batch whose transaction SQLite rolled back
  // on its own (SQLITE_FULL, SQLITE_IOERR, ...), when later writes would autocommit.
  bool InTransaction() const;
  // Runs body() inside BEGIN IMMEDIATE ... COMMIT, rolled back when it fails. Inside an open
  // transaction (a Batch) it is a savepoint instead: a failed body undoes only its own writes,
  // and what succeeded becomes durable when the outer transaction commits.
  Status Atomically(const std::function<Status()>& body);

  // --- For the facades ---
  sqlite3* handle() const { return db_; }
  // A cached prepared statement for `sql`. The cache key is the std::string_view itself: it
  // keeps the address and length of the caller's text, not a copy (lookups compare the text),
  // so `sql` must outlive this Database - a literal or a function-local static string.
  Result<sqlite3_stmt*> Prepare(std::string_view sql);
  // Runs SQL that returns no rows; `doing` names it in errors.
  Status Exec(const char* sql, std::string_view doing);

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  Status Migrate(const std::string& path);

  sqlite3* db_;
  std::unordered_map<std::string_view, sqlite3_stmt*> cache_;
};

}  // namespace hubwatch::store
