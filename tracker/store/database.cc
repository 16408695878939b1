#include "tracker/store/database.h"

#include <sqlite3.h>

#include "tracker/store/connection.h"
#include "tracker/store/migrations.h"

namespace hubwatch::store {

Error SqliteError(sqlite3* db, int rc, std::string_view doing) {
  const int primary = rc & 0xff;
  std::string what;
  if (primary == SQLITE_FULL) {
    what = "the database or disk is full";
  } else if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    what = "the database is locked by another process";
  } else {
    what = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  }
  return Error::Io("store: " + std::string(doing) + ": " + what);
}

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<nlohmann::json> StoredJson(const std::string& text, std::string_view what) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error::Io("store: " + std::string(what) + " is damaged: not JSON");
  return j;
}

Result<std::vector<std::string>> StoredStringList(const std::string& text, std::string_view what) {
  Result<nlohmann::json> j = StoredJson(text, what);
  if (!j.ok()) return j.error();
  std::vector<std::string> out;
  if (!j->is_array()) {
    return Error::Io("store: " + std::string(what) + " is damaged: not a list of strings");
  }
  for (const nlohmann::json& v : *j) {
    if (!v.is_string()) {
      return Error::Io("store: " + std::string(what) + " is damaged: not a list of strings");
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

int Database::SchemaVersion() { return static_cast<int>(Migrations().size()); }

Database::~Database() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& path,
                                                 const StoreOptions& options) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error e = SqliteError(db, rc, "opening " + path);
    sqlite3_close(db);
    return e;
  }
  std::unique_ptr<Database> database(new Database(db));
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  if (path != ":memory:") {
    HW_TRY(database->Exec("PRAGMA journal_mode=WAL", "enabling WAL"));
  }
  HW_TRY(database->Exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL", "setting pragmas"));
  if (options.max_page_count) {
    const std::string pragma = "PRAGMA max_page_count=" + std::to_string(*options.max_page_count);
    HW_TRY(database->Exec(pragma.c_str(), "capping the database size"));
  }
  if (options.cache_kib) {
    const std::string pragma = "PRAGMA cache_size=-" + std::to_string(*options.cache_kib);
    HW_TRY(database->Exec(pragma.c_str(), "sizing the page cache"));
  }
  HW_TRY(database->Migrate(path));
  return database;
}

Status Database::Migrate(const std::string& path) {
  int64_t version = 0;
  {
    Result<sqlite3_stmt*> stmt = Prepare("PRAGMA user_version");
    if (!stmt.ok()) return stmt.error();
    Statement q(db_, *stmt);
    Result<bool> row = q.Step("reading the schema version");
    if (!row.ok()) return row.error();
    version = q.Int(0);
  }
  const auto migrations = Migrations();
  if (version > static_cast<int64_t>(migrations.size())) {
    return Error::Io("store: " + path + " has schema version " + std::to_string(version) +
                     ", newer than this hubwatch understands (" +
                     std::to_string(migrations.size()) + "); upgrade hubwatch to open it");
  }
  for (size_t i = static_cast<size_t>(version); i < migrations.size(); ++i) {
    const std::string bump = "PRAGMA user_version=" + std::to_string(i + 1);
    HW_TRY(Atomically([&]() -> Status {
      HW_TRY(Exec(migrations[i].sql, std::string("applying ") + migrations[i].name));
      return Exec(bump.c_str(), "recording the schema version");
    }));
  }
  return Status::Ok();
}

Result<sqlite3_stmt*> Database::Prepare(std::string_view sql) {
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

Status Database::Exec(const char* sql, std::string_view doing) {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, doing);
  return Status::Ok();
}

Status Database::Batch(const std::function<void()>& body) {
  HW_TRY(Exec("BEGIN IMMEDIATE", "starting a batch"));
  body();
  Status s = Exec("COMMIT", "committing a batch");
  if (!s.ok()) (void)Exec("ROLLBACK", "rolling back a batch");
  return s;
}

bool Database::InTransaction() const { return !sqlite3_get_autocommit(db_); }

Status Database::Atomically(const std::function<Status()>& body) {
  if (InTransaction()) {
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

}  // namespace hubwatch::store
