#pragma once

// Store: hubwatch's durable state in SQLite (WAL, foreign keys, a busy timeout, prepared
// statements only). Open() applies the migrations of schema/migrations/ in order, tracked by
// PRAGMA user_version, and refuses a database written by a newer hubwatch.
//
// Exactly once: Ingest() writes everything one revision adds - manifest, blobs, headers,
// changes, estimate, advisories, outbox rows and the repo's ref cursors - in one transaction,
// and ingesting a revision already present changes nothing.
//
// Thread safety: a Store owns one connection and must be used from one thread at a time.
// Several Stores (processes) may open the same file; writers wait up to the busy timeout.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimator/result.h"
#include "tracker/store/records.h"

struct sqlite3;

namespace hubwatch::store {

struct StoreOptions {
  int busy_timeout_ms = 5000;
  // Tests: cap the database size (PRAGMA max_page_count) to provoke "disk full".
  std::optional<int64_t> max_page_count{};
};

// Filters for listing changes and advisories. Empty / 0 means "any".
struct Query {
  std::string repo{};
  std::string kind{};
  int64_t since = 0;         // changes: created_at >= since; advisories: seq > since
  std::string since_time{};  // advisories: modified >= this RFC 3339 time
  int64_t limit = 0;
};

enum class IngestOutcome { kIngested, kAlreadyPresent };

class Store {
 public:
  // The schema version this binary writes (the number of migrations).
  static int SchemaVersion();

  // Opens (creating if needed) the database at `path` (":memory:" for a private in-memory one).
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             const StoreOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Repositories.
  Status AddRepo(const RepoRecord& repo);    // inserts, or updates the refs of an existing one
  Status RemoveRepo(const std::string& id);  // and everything recorded about it
  Result<std::optional<RepoRecord>> GetRepo(const std::string& id);
  Result<std::vector<RepoRecord>> ListRepos();
  // Polling state: state, detail, error count and next poll time; renamed_to when renamed.
  Status UpdateRepoPoll(const RepoRecord& repo);

  Result<std::optional<std::string>> GetRefHead(const std::string& repo, const std::string& ref);
  // Moves a ref cursor to a revision already ingested (a ref that caught up with another).
  Status SetRefHead(const std::string& repo, const std::string& ref, const std::string& sha,
                    int64_t now);

  // Revisions, newest first; `before`: only those ingested before that sha.
  Result<bool> HasRevision(const std::string& repo, const std::string& sha);
  Result<std::optional<RevisionRecord>> GetRevision(const std::string& repo,
                                                    const std::string& sha);
  Result<std::vector<RevisionRecord>> ListRevisions(const std::string& repo, int64_t limit = 0,
                                                    const std::string& before = {});
  // The most recently ingested revision of a repo that is not rewritten away.
  Result<std::optional<RevisionRecord>> LatestRevision(const std::string& repo);

  Result<diff::Manifest> GetManifest(const std::string& repo, const std::string& sha);
  Result<std::optional<std::string>> GetBlob(const std::string& oid);
  Result<std::optional<SafetensorsHeader>> GetHeader(const std::string& sha256);

  Result<IngestOutcome> Ingest(const RevisionIngest& ingest);

  Result<std::vector<ChangeRecord>> ListChanges(const Query& query);
  Result<std::vector<ChangeRecord>> ChangesOf(const std::string& repo, const std::string& sha);
  // The revision of the most recent change of this kind and path, if any: where the current
  // state of that file (or aspect) first appeared.
  Result<std::optional<std::string>> LastChangeRevision(const std::string& repo,
                                                        std::string_view kind,
                                                        const std::string& path);
  Result<std::optional<EstimateRecord>> GetEstimate(const std::string& repo,
                                                    const std::string& sha);
  // The estimate of the latest revision of `repo` that has one.
  Result<std::optional<EstimateRecord>> LatestEstimate(const std::string& repo);
  Result<std::vector<AdvisoryRecord>> ListAdvisories(const Query& query);
  Result<std::optional<AdvisoryRecord>> GetAdvisory(const std::string& id);
  // HTTP validators for conditional requests.
  struct CachedResponse {
    std::string etag;
    std::string body;
    std::string headers;  // JSON array of [name, value] pairs
  };
  Result<std::optional<CachedResponse>> GetHttpCache(const std::string& url);
  Status PutHttpCache(const std::string& url, const CachedResponse& response, int64_t now);

 private:
  explicit Store(sqlite3* db);
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hubwatch::store
