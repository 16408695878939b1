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

  // --- HTTP API queries ---
  // Read-only queries behind daemon/api (tracker/store/store_api_queries.cc). Where a query
  // returns records, it finds their keys and reads each through the getters above, so there is
  // one reader per table.

  // The shas of `repo`'s revisions that start with `prefix` (lower-case hex), at most `limit`.
  Result<std::vector<std::string>> FindRevisionShas(const std::string& repo,
                                                    const std::string& prefix, int64_t limit);
  // The changes of the revisions of `repo` ingested after revision `sha` that are not rewritten
  // away, oldest first; `kind` "" = any. Empty when `sha` is not a revision of `repo`.
  Result<std::vector<ChangeRecord>> ChangesAfter(const std::string& repo, const std::string& sha,
                                                 const std::string& kind);
  struct ChangeTally {
    int64_t cosmetic = 0;
    int64_t behavioral = 0;
    int64_t breaking = 0;
  };
  // ChangesAfter(repo, sha, kind), counted by impact.
  Result<ChangeTally> TallyChangesAfter(const std::string& repo, const std::string& sha,
                                        const std::string& kind);
  struct LastChange {
    std::string sha;
    std::string kind;
    std::string authored_at;  // of its revision, RFC 3339 as the Hub gave it ("" if unknown)
    int64_t first_seen_at = 0;
  };
  // The newest behavioral or breaking change of `kind` ("" = any) in a revision of `repo` that is
  // not rewritten away.
  Result<std::optional<LastChange>> LatestChange(const std::string& repo, const std::string& kind);
  // The highest advisory seq so far (0: none).
  Result<int64_t> MaxAdvisorySeq();
  // Advisories newest first (seq descending); query.repo, kind and limit apply.
  Result<std::vector<AdvisoryRecord>> RecentAdvisories(const Query& query);
  // osv.dev query semantics over one repo, withdrawn advisories left out, seq ascending:
  // commit "" = every advisory of the repo; otherwise those whose GIT range holds the commit,
  // in ingest order: introduced <= commit < fixed ("0" or an unknown introduced = the start).
  // An unknown commit matches nothing.
  struct AffectingQuery {
    std::string repo;
    std::string commit;
    int64_t after_seq = 0;  // paging: only seq > after_seq
    int64_t limit = 0;      // 0: no limit
  };
  Result<std::vector<AdvisoryRecord>> AdvisoriesAffecting(const AffectingQuery& query);
  // The repos that have a revision `sha`, by id.
  Result<std::vector<std::string>> ReposWithRevision(const std::string& sha);

 private:
  explicit Store(sqlite3* db);
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hubwatch::store
