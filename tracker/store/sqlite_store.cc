#include <sqlite3.h>

#include <cstdint>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "tracker/diff/json_text.h"
#include "tracker/store/migrations.h"
#include "tracker/store/sqlite_statement.h"
#include "tracker/store/store.h"
#include "tracker/store/store_impl.h"

namespace hubwatch::store {
namespace {

std::string ToJsonText(const std::vector<std::string>& list) {
  return DumpJson(nlohmann::json(list));
}

// An int64 shape dimension as HeaderToJson wrote it: a non-negative integer.
bool ReadDimension(const nlohmann::json& v, int64_t& out) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
    out = static_cast<int64_t>(v.get<uint64_t>());
    return true;
  }
  return false;  // negative or not an integer: HeaderToJson never writes one
}

// A change's details as stored: within diff::kMaxDetailsBytes whatever the engine wrote.
std::string BoundedDetailsText(const nlohmann::json& details) {
  std::string text = DumpJson(details);
  if (text.size() > diff::kMaxDetailsBytes) text = DumpJson(diff::BoundDetails(details));
  return text;
}

nlohmann::json HeaderToJson(const SafetensorsHeader& h) {
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto& [name, t] : h.tensors) {
    tensors[name] = {t.dtype, t.shape, t.data_begin, t.data_end};
  }
  return {{"tensors", std::move(tensors)}, {"metadata", h.metadata}, {"data_size", h.data_size}};
}

Result<SafetensorsHeader> HeaderFromJson(const std::string& text, const std::string& what) {
  Result<nlohmann::json> doc = StoredJson(text, what);
  if (!doc.ok()) return doc.error();
  auto damaged = [&](const std::string& why) {
    return Error::Io("store: " + what + " is damaged: " + why);
  };
  const nlohmann::json& j = *doc;
  const auto tensors = j.is_object() ? j.find("tensors") : j.end();
  if (tensors == j.end() || !tensors->is_object()) return damaged("no \"tensors\" object");
  SafetensorsHeader h;
  for (auto it = tensors->begin(); it != tensors->end(); ++it) {
    const nlohmann::json& v = *it;
    SafetensorsTensor t;
    if (!v.is_array() || v.size() != 4 || !v[0].is_string() || !v[1].is_array() ||
        !v[2].is_number_unsigned() || !v[3].is_number_unsigned()) {
      return damaged("a tensor is not [dtype, shape, begin, end]");
    }
    t.dtype = v[0].get<std::string>();
    for (const nlohmann::json& d : v[1]) {
      int64_t dim = 0;
      if (!ReadDimension(d, dim) ||
          __builtin_mul_overflow(t.elements, static_cast<uint64_t>(dim), &t.elements)) {
        return damaged("a tensor shape is not a list of sizes");
      }
      t.shape.push_back(dim);
    }
    t.data_begin = v[2].get<uint64_t>();
    t.data_end = v[3].get<uint64_t>();
    h.tensors.emplace(it.key(), std::move(t));
  }
  if (const auto metadata = j.find("metadata"); metadata != j.end()) {
    if (!metadata->is_object()) return damaged("\"metadata\" is not an object");
    for (auto it = metadata->begin(); it != metadata->end(); ++it) {
      if (!it->is_string()) return damaged("\"metadata\" holds a value that is not a string");
      h.metadata.emplace(it.key(), it->get<std::string>());
    }
  }
  if (const auto size = j.find("data_size"); size != j.end()) {
    if (!size->is_number_unsigned()) return damaged("\"data_size\" is not a size");
    h.data_size = size->get<uint64_t>();
  }
  return h;
}

}  // namespace

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

int Store::SchemaVersion() { return static_cast<int>(Migrations().size()); }

Store::Store(sqlite3* db) : impl_(std::make_unique<Impl>(db)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const StoreOptions& options) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error e = SqliteError(db, rc, "opening " + path);
    sqlite3_close(db);
    return e;
  }
  std::unique_ptr<Store> store(new Store(db));
  Impl& impl = *store->impl_;
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  if (path != ":memory:") {
    HW_TRY(impl.Exec("PRAGMA journal_mode=WAL", "enabling WAL"));
  }
  HW_TRY(impl.Exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL", "setting pragmas"));
  if (options.max_page_count) {
    const std::string pragma = "PRAGMA max_page_count=" + std::to_string(*options.max_page_count);
    HW_TRY(impl.Exec(pragma.c_str(), "capping the database size"));
  }

  int64_t version = 0;
  {
    Result<sqlite3_stmt*> stmt = impl.Prepare("PRAGMA user_version");
    if (!stmt.ok()) return stmt.error();
    Statement q(db, *stmt);
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
    HW_TRY(impl.Transaction([&]() -> Status {
      HW_TRY(impl.Exec(migrations[i].sql, std::string("applying ") + migrations[i].name));
      return impl.Exec(bump.c_str(), "recording the schema version");
    }));
  }
  return store;
}

Status Store::Batch(const std::function<void()>& body) {
  HW_TRY(impl_->Exec("BEGIN IMMEDIATE", "starting a batch"));
  body();
  Status s = impl_->Exec("COMMIT", "committing a batch");
  if (!s.ok()) (void)impl_->Exec("ROLLBACK", "rolling back a batch");
  return s;
}

Status Store::Atomically(const std::function<Status()>& body) {
  return impl_->Transaction([&] { return body(); });
}

bool Store::InTransaction() const { return !sqlite3_get_autocommit(impl_->db()); }

Status Store::AddRepo(const RepoRecord& repo) {
  HW_PREPARE(q,
             "INSERT INTO repos (id, refs, added_at, next_poll_at, source) "
             "VALUES (?1, ?2, ?3, ?4, ?5) "
             "ON CONFLICT (id) DO UPDATE SET refs = excluded.refs, source = excluded.source");
  return q.Bind(1, repo.id)
      .Bind(2, ToJsonText(repo.refs))
      .Bind(3, repo.added_at)
      .Bind(4, repo.next_poll_at)
      .Bind(5, repo.source)
      .Run("adding repo " + repo.id);
}

Status Store::RemoveRepo(const std::string& id) {
  return impl_->Transaction([&]() -> Status {
    // Advisories reference changes, which reference revisions: delete leaf first.
    HW_PREPARE(h, "DELETE FROM held_advisories WHERE repo = ?1");
    HW_TRY(h.Bind(1, id).Run("removing held advisories"));
    HW_PREPARE(a, "DELETE FROM advisories WHERE repo = ?1");
    HW_TRY(a.Bind(1, id).Run("removing advisories"));
    HW_PREPARE(r, "DELETE FROM repos WHERE id = ?1");
    return r.Bind(1, id).Run("removing repo " + id);
  });
}

static Result<RepoRecord> ReadRepo(const Statement& q) {
  RepoRecord r;
  r.id = q.Text(0);
  Result<std::vector<std::string>> refs = StoredStringList(q.Text(1), "the refs of repo " + r.id);
  if (!refs.ok()) return refs.error();
  r.refs = std::move(refs).value();
  if (!ParseRepoState(q.Text(2), r.state)) {
    return Error::Io("store: the state of repo " + r.id + " is damaged: not a known state");
  }
  r.state_detail = q.Text(3);
  r.renamed_to = q.OptionalText(4);
  r.added_at = q.Int(5);
  r.last_polled_at = q.IsNull(6) ? 0 : q.Int(6);
  r.next_poll_at = q.Int(7);
  r.consecutive_errors = q.Int(8);
  r.source = q.Text(9);
  return r;
}

constexpr const char kRepoColumns[] =
    "SELECT id, refs, state, state_detail, renamed_to, added_at, last_polled_at, next_poll_at, "
    "consecutive_errors, source FROM repos ";

Result<std::optional<RepoRecord>> Store::GetRepo(const std::string& id) {
  static const std::string sql = std::string(kRepoColumns) + "WHERE id = ?1";
  HW_PREPARE(q, sql);
  q.Bind(1, id);
  Result<bool> row = q.Step("reading repo " + id);
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<RepoRecord>();
  Result<RepoRecord> repo = ReadRepo(q);
  if (!repo.ok()) return repo.error();
  return std::optional<RepoRecord>(std::move(repo).value());
}

Result<std::vector<RepoRecord>> Store::ListRepos() {
  static const std::string sql = std::string(kRepoColumns) + "ORDER BY id";
  HW_PREPARE(q, sql);
  return Collect(q, "listing repos", ReadRepo);
}

Status Store::UpdateRepoPoll(const RepoRecord& repo) {
  HW_PREPARE(q,
             "UPDATE repos SET state = ?2, state_detail = ?3, renamed_to = ?4, "
             "last_polled_at = ?5, next_poll_at = ?6, consecutive_errors = ?7 WHERE id = ?1");
  return q.Bind(1, repo.id)
      .Bind(2, RepoStateName(repo.state))
      .Bind(3, repo.state_detail)
      .BindOptional(4, repo.renamed_to)
      .Bind(5, repo.last_polled_at)
      .Bind(6, repo.next_poll_at)
      .Bind(7, repo.consecutive_errors)
      .Run("updating repo " + repo.id);
}

Result<std::optional<std::string>> Store::GetRefHead(const std::string& repo,
                                                     const std::string& ref) {
  HW_PREPARE(q, "SELECT sha FROM ref_heads WHERE repo = ?1 AND ref = ?2");
  q.Bind(1, repo).Bind(2, ref);
  Result<bool> row = q.Step("reading ref head");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(q.Text(0));
}

Status Store::SetRefHead(const std::string& repo, const std::string& ref, const std::string& sha,
                         int64_t now) {
  HW_PREPARE(q,
             "INSERT INTO ref_heads (repo, ref, sha, updated_at) VALUES (?1, ?2, ?3, ?4) "
             "ON CONFLICT (repo, ref) DO UPDATE SET sha = excluded.sha, "
             "updated_at = excluded.updated_at");
  return q.Bind(1, repo).Bind(2, ref).Bind(3, sha).Bind(4, now).Run("moving a ref cursor");
}

Result<bool> Store::HasRevision(const std::string& repo, const std::string& sha) {
  HW_PREPARE(q, "SELECT 1 FROM revisions WHERE repo = ?1 AND sha = ?2");
  q.Bind(1, repo).Bind(2, sha);
  return q.Step("looking up revision");
}

constexpr const char kRevisionColumns[] =
    "SELECT repo, sha, parents, authored_at, title, message, authors, refs, first_seen_at, "
    "ingest_order, rewritten_away FROM revisions ";

static Result<RevisionRecord> ReadRevision(const Statement& q) {
  RevisionRecord r;
  r.repo = q.Text(0);
  r.sha = q.Text(1);
  const std::string of = " of revision " + r.repo + "@" + r.sha;
  for (auto [column, list, name] :
       {std::tuple{2, &r.parents, "the parents"}, std::tuple{6, &r.authors, "the authors"},
        std::tuple{7, &r.refs, "the refs"}}) {
    Result<std::vector<std::string>> read = StoredStringList(q.Text(column), name + of);
    if (!read.ok()) return read.error();
    *list = std::move(read).value();
  }
  r.authored_at = q.Text(3);
  r.title = q.Text(4);
  r.message = q.Text(5);
  r.first_seen_at = q.Int(8);
  r.ingest_order = q.Int(9);
  r.rewritten_away = q.Int(10) != 0;
  return r;
}

Result<std::optional<RevisionRecord>> Store::GetRevision(const std::string& repo,
                                                         const std::string& sha) {
  static const std::string sql = std::string(kRevisionColumns) + "WHERE repo = ?1 AND sha = ?2";
  HW_PREPARE(q, sql);
  q.Bind(1, repo).Bind(2, sha);
  Result<bool> row = q.Step("reading revision");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<RevisionRecord>();
  Result<RevisionRecord> revision = ReadRevision(q);
  if (!revision.ok()) return revision.error();
  return std::optional<RevisionRecord>(std::move(revision).value());
}

Result<std::vector<RevisionRecord>> Store::ListRevisions(const std::string& repo, int64_t limit,
                                                         const std::string& before) {
  static const std::string sql =
      std::string(kRevisionColumns) +
      "WHERE repo = ?1 AND (?3 = '' OR ingest_order < (SELECT ingest_order FROM revisions "
      "WHERE repo = ?1 AND sha = ?3)) ORDER BY ingest_order DESC LIMIT ?2";
  HW_PREPARE(q, sql);
  q.Bind(1, repo).Bind(2, limit > 0 ? limit : int64_t{-1}).Bind(3, before);
  return Collect(q, "listing revisions", ReadRevision);
}

Result<std::optional<RevisionRecord>> Store::LatestRevision(const std::string& repo) {
  static const std::string sql = std::string(kRevisionColumns) +
                                 "WHERE repo = ?1 AND rewritten_away = 0 "
                                 "ORDER BY ingest_order DESC LIMIT 1";
  HW_PREPARE(q, sql);
  q.Bind(1, repo);
  Result<bool> row = q.Step("reading the latest revision");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<RevisionRecord>();
  Result<RevisionRecord> revision = ReadRevision(q);
  if (!revision.ok()) return revision.error();
  return std::optional<RevisionRecord>(std::move(revision).value());
}

Result<diff::Manifest> Store::GetManifest(const std::string& repo, const std::string& sha) {
  HW_PREPARE(q,
             "SELECT path, oid, size, lfs_sha256 FROM manifests WHERE repo = ?1 AND sha = ?2 "
             "ORDER BY path");
  q.Bind(1, repo).Bind(2, sha);
  diff::Manifest out;
  while (true) {
    Result<bool> row = q.Step("reading manifest");
    if (!row.ok()) return row.error();
    if (!*row) return out;
    diff::ManifestEntry e;
    e.path = q.Text(0);
    e.git_oid = q.Text(1);
    e.size = static_cast<uint64_t>(q.Int(2));
    e.lfs_sha256 = q.OptionalText(3);
    if (e.lfs_sha256) e.lfs_size = e.size;
    out.push_back(std::move(e));
  }
}

Result<std::optional<std::string>> Store::GetBlob(const std::string& oid) {
  HW_PREPARE(q, "SELECT content FROM blobs WHERE oid = ?1");
  q.Bind(1, oid);
  Result<bool> row = q.Step("reading blob");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(q.Blob(0));
}

Result<std::optional<SafetensorsHeader>> Store::GetHeader(const std::string& sha256) {
  HW_PREPARE(q, "SELECT tensors FROM safetensors_headers WHERE sha256 = ?1");
  q.Bind(1, sha256);
  Result<bool> row = q.Step("reading safetensors header");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<SafetensorsHeader>();
  Result<SafetensorsHeader> h = HeaderFromJson(q.Text(0), "safetensors header " + sha256);
  if (!h.ok()) return h.error();
  return std::optional<SafetensorsHeader>(std::move(h).value());
}

Result<IngestOutcome> Store::Ingest(const RevisionIngest& in) {
  const RevisionRecord& rev = in.revision;
  IngestOutcome outcome = IngestOutcome::kIngested;
  Status s = impl_->Transaction([&]() -> Status {
    {
      HW_PREPARE(q, "SELECT 1 FROM revisions WHERE repo = ?1 AND sha = ?2");
      Result<bool> exists = q.Bind(1, rev.repo).Bind(2, rev.sha).Step("checking revision");
      if (!exists.ok()) return exists.error();
      if (*exists) {
        outcome = IngestOutcome::kAlreadyPresent;
        return Status::Ok();  // an empty transaction: nothing changes
      }
    }
    {
      HW_PREPARE(q,
                 "INSERT INTO revisions (repo, sha, parents, authored_at, title, message, "
                 "authors, refs, first_seen_at, ingest_order) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                 "?7, ?8, ?9, (SELECT COALESCE(MAX(ingest_order), 0) + 1 FROM revisions "
                 "WHERE repo = ?1))");
      HW_TRY(q.Bind(1, rev.repo)
                 .Bind(2, rev.sha)
                 .Bind(3, ToJsonText(rev.parents))
                 .Bind(4, rev.authored_at)
                 .Bind(5, rev.title)
                 .Bind(6, rev.message)
                 .Bind(7, ToJsonText(rev.authors))
                 .Bind(8, ToJsonText(rev.refs))
                 .Bind(9, rev.first_seen_at)
                 .Run("recording revision " + rev.sha));
    }
    for (const diff::ManifestEntry& f : in.manifest) {
      HW_PREPARE(q,
                 "INSERT INTO manifests (repo, sha, path, oid, size, lfs_sha256) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
      HW_TRY(q.Bind(1, rev.repo)
                 .Bind(2, rev.sha)
                 .Bind(3, f.path)
                 .Bind(4, f.git_oid)
                 .Bind(5, static_cast<int64_t>(f.size))
                 .BindOptional(6, f.lfs_sha256)
                 .Run("recording manifest"));
    }
    for (const auto& [oid, content] : in.blobs) {
      HW_PREPARE(q, "INSERT OR IGNORE INTO blobs (oid, content) VALUES (?1, ?2)");
      HW_TRY(q.Bind(1, oid).BindBlob(2, content).Run("storing blob " + oid));
    }
    for (const auto& [sha256, header] : in.headers) {
      uint64_t elements = 0;
      for (const auto& [name, t] : header.tensors) elements += t.elements;
      HW_PREPARE(q,
                 "INSERT OR IGNORE INTO safetensors_headers (sha256, tensors, count, elements) "
                 "VALUES (?1, ?2, ?3, ?4)");
      HW_TRY(q.Bind(1, sha256)
                 .Bind(2, DumpJson(HeaderToJson(header)))
                 .Bind(3, static_cast<int64_t>(header.tensors.size()))
                 .Bind(4, static_cast<int64_t>(elements))
                 .Run("storing safetensors header"));
    }
    std::vector<int64_t> change_ids;
    for (size_t i = 0; i < in.changes.size(); ++i) {
      const diff::Change& c = in.changes[i];
      HW_PREPARE(q,
                 "INSERT INTO changes (repo, sha, ordinal, kind, impact, path, summary, details, "
                 "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
      HW_TRY(q.Bind(1, rev.repo)
                 .Bind(2, rev.sha)
                 .Bind(3, static_cast<int64_t>(i))
                 .Bind(4, diff::KindName(c.kind))
                 .Bind(5, diff::ImpactName(c.impact))
                 .Bind(6, c.path)
                 .Bind(7, c.summary.size() > diff::kMaxSummaryBytes
                              ? diff::CutText(c.summary, diff::kMaxSummaryBytes)
                              : c.summary)
                 .Bind(8, BoundedDetailsText(c.details))
                 .Bind(9, rev.first_seen_at)
                 .Run("recording a change"));
      change_ids.push_back(sqlite3_last_insert_rowid(impl_->db()));
    }
    if (in.estimate) {
      const EstimateRecord& e = *in.estimate;
      HW_PREPARE(q,
                 "INSERT INTO estimates (repo, sha, estimate, params_total, params_active, "
                 "kv_bytes_per_token, parameter_delta) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
      HW_TRY(q.Bind(1, rev.repo)
                 .Bind(2, rev.sha)
                 .Bind(3, e.estimate.dump())
                 .Bind(4, static_cast<int64_t>(e.params_total))
                 .Bind(5, static_cast<int64_t>(e.params_active))
                 .Bind(6, e.kv_bytes_per_token)
                 .BindOptional(7, e.parameter_delta)
                 .Run("recording the estimate"));
    }
    HW_TRY(RecordAdvisories(in, change_ids));
    for (const auto& [ref, sha] : in.ref_heads) {
      HW_PREPARE(q,
                 "INSERT INTO ref_heads (repo, ref, sha, updated_at) VALUES (?1, ?2, ?3, ?4) "
                 "ON CONFLICT (repo, ref) DO UPDATE SET sha = excluded.sha, "
                 "updated_at = excluded.updated_at");
      HW_TRY(q.Bind(1, rev.repo)
                 .Bind(2, ref)
                 .Bind(3, sha)
                 .Bind(4, rev.first_seen_at)
                 .Run("moving the ref cursor"));
    }
    for (const std::string& sha : in.rewritten_away) {
      HW_PREPARE(q, "UPDATE revisions SET rewritten_away = 1 WHERE repo = ?1 AND sha = ?2");
      HW_TRY(q.Bind(1, rev.repo).Bind(2, sha).Run("marking rewritten revisions"));
    }
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  return outcome;
}

constexpr const char kChangeColumns[] =
    "SELECT id, repo, sha, ordinal, kind, impact, path, summary, details, created_at FROM changes ";

static Result<ChangeRecord> ReadChange(const Statement& q) {
  ChangeRecord r;
  r.id = q.Int(0);
  r.repo = q.Text(1);
  r.sha = q.Text(2);
  r.ordinal = static_cast<int>(q.Int(3));
  const std::string what = "change " + std::to_string(r.id) + " (" + r.repo + "@" + r.sha + ")";
  if (!diff::ParseKind(q.Text(4), r.change.kind)) {
    return Error::Io("store: " + what + " is damaged: not a known kind");
  }
  const std::string impact = q.Text(5);
  if (impact == "breaking") {
    r.change.impact = diff::Impact::kBreaking;
  } else if (impact == "behavioral") {
    r.change.impact = diff::Impact::kBehavioral;
  } else if (impact == "cosmetic") {
    r.change.impact = diff::Impact::kCosmetic;
  } else {
    return Error::Io("store: " + what + " is damaged: not a known impact");
  }
  r.change.path = q.Text(6);
  r.change.summary = q.Text(7);
  Result<nlohmann::json> details = StoredJson(q.Text(8), "the details of " + what);
  if (!details.ok()) return details.error();
  r.change.details = std::move(details).value();
  r.created_at = q.Int(9);
  return r;
}

Result<std::vector<ChangeRecord>> Store::ListChanges(const Query& query) {
  static const std::string sql = std::string(kChangeColumns) +
                                 "WHERE (?1 = '' OR repo = ?1) AND (?2 = '' OR kind = ?2) "
                                 "AND created_at >= ?3 ORDER BY id LIMIT ?4";
  HW_PREPARE(q, sql);
  q.Bind(1, query.repo)
      .Bind(2, query.kind)
      .Bind(3, query.since)
      .Bind(4, query.limit > 0 ? query.limit : int64_t{-1});
  return Collect(q, "listing changes", ReadChange);
}

Result<std::vector<ChangeRecord>> Store::ChangesOf(const std::string& repo,
                                                   const std::string& sha) {
  static const std::string sql =
      std::string(kChangeColumns) + "WHERE repo = ?1 AND sha = ?2 ORDER BY ordinal";
  HW_PREPARE(q, sql);
  q.Bind(1, repo).Bind(2, sha);
  return Collect(q, "listing changes of a revision", ReadChange);
}

Result<std::optional<std::string>> Store::LastChangeRevision(const std::string& repo,
                                                             std::string_view kind,
                                                             const std::string& path) {
  HW_PREPARE(q,
             "SELECT c.sha FROM changes c JOIN revisions r ON r.repo = c.repo AND r.sha = c.sha "
             "WHERE c.repo = ?1 AND c.kind = ?2 AND c.path = ?3 AND r.rewritten_away = 0 "
             "ORDER BY r.ingest_order DESC LIMIT 1");
  q.Bind(1, repo).Bind(2, kind).Bind(3, path);
  Result<bool> row = q.Step("finding the last change");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(q.Text(0));
}

constexpr const char kEstimateColumns[] =
    "SELECT e.repo, e.sha, e.estimate, e.params_total, e.params_active, e.kv_bytes_per_token, "
    "e.parameter_delta FROM estimates e ";

static EstimateRecord ReadEstimate(const Statement& q) {
  EstimateRecord r;
  r.repo = q.Text(0);
  r.sha = q.Text(1);
  r.estimate = nlohmann::json::parse(q.Text(2), nullptr, false);
  r.params_total = static_cast<uint64_t>(q.Int(3));
  r.params_active = static_cast<uint64_t>(q.Int(4));
  r.kv_bytes_per_token = q.Real(5);
  if (!q.IsNull(6)) r.parameter_delta = q.Int(6);
  return r;
}

Result<std::optional<EstimateRecord>> Store::GetEstimate(const std::string& repo,
                                                         const std::string& sha) {
  static const std::string sql = std::string(kEstimateColumns) + "WHERE repo = ?1 AND sha = ?2";
  HW_PREPARE(q, sql);
  q.Bind(1, repo).Bind(2, sha);
  Result<bool> row = q.Step("reading estimate");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<EstimateRecord>();
  return std::optional<EstimateRecord>(ReadEstimate(q));
}

Result<std::optional<EstimateRecord>> Store::LatestEstimate(const std::string& repo) {
  static const std::string sql =
      std::string(kEstimateColumns) +
      "JOIN revisions r ON r.repo = e.repo AND r.sha = e.sha WHERE e.repo = ?1 "
      "AND r.rewritten_away = 0 ORDER BY r.ingest_order DESC LIMIT 1";
  HW_PREPARE(q, sql);
  q.Bind(1, repo);
  Result<bool> row = q.Step("reading the latest estimate");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<EstimateRecord>();
  return std::optional<EstimateRecord>(ReadEstimate(q));
}

Result<std::optional<Store::CachedResponse>> Store::GetHttpCache(const std::string& url) {
  HW_PREPARE(q, "SELECT etag, body, headers FROM http_cache WHERE url = ?1");
  q.Bind(1, url);
  Result<bool> row = q.Step("reading the HTTP cache");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<CachedResponse>();
  return std::optional<CachedResponse>(CachedResponse{q.Text(0), q.Blob(1), q.Text(2)});
}

Status Store::PutHttpCache(const std::string& url, const CachedResponse& response, int64_t now) {
  HW_PREPARE(q,
             "INSERT INTO http_cache (url, etag, body, headers, stored_at) "
             "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, "
             "body = excluded.body, headers = excluded.headers, stored_at = excluded.stored_at");
  return q.Bind(1, url)
      .Bind(2, response.etag)
      .BindBlob(3, response.body)
      .Bind(4, response.headers)
      .Bind(5, now)
      .Run("writing the HTTP cache");
}

}  // namespace hubwatch::store
