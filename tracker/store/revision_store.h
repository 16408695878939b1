#pragma once

// RevisionStore: tracked repos and their polling state, ref cursors, ingested revisions with
// their manifests, blobs, safetensors headers, changes and estimates, the HTTP cache, and the
// read-only queries the HTTP API asks about them.
//
// Exactly once: Ingest() writes everything one revision adds - manifest, blobs, headers,
// changes, estimate, advisories (through AdvisoryStore), outbox rows and the repo's ref cursors
// - in one transaction, and ingesting a revision already present changes nothing.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database and
// the AdvisoryStore, which must outlive it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/advisory_store.h"
#include "tracker/store/database.h"
#include "tracker/store/records.h"

namespace hubwatch::store {

// HTTP validators for conditional requests.
struct CachedResponse {
  std::string etag;
  std::string body;
  std::string headers;  // JSON array of [name, value] pairs
};

// Changes counted by impact.
struct ChangeTally {
  int64_t cosmetic = 0;
  int64_t behavioral = 0;
  int64_t breaking = 0;
};

struct LastChange {
  std::string sha;
  std::string kind;
  std::string authored_at;  // of its revision, RFC 3339 as the Hub gave it ("" if unknown)
  int64_t first_seen_at = 0;
};

class RevisionStore {
 public:
  RevisionStore(Database& db, AdvisoryStore& advisories) : db_(db), advisories_(advisories) {}

  // Repositories.
  Status AddRepo(const RepoRecord& repo);    // inserts, or updates the refs and source of one
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

  Result<std::optional<CachedResponse>> GetHttpCache(const std::string& url);
  Status PutHttpCache(const std::string& url, const CachedResponse& response, int64_t now);

  // --- HTTP API queries (revision_queries.cc) ---
  // Where a query returns records, it finds their keys and reads each through the getters
  // above, so there is one reader per table.

  // The shas of `repo`'s revisions that start with `prefix` (lower-case hex), at most `limit`.
  Result<std::vector<std::string>> FindRevisionShas(const std::string& repo,
                                                    const std::string& prefix, int64_t limit);
  // The changes of the revisions of `repo` ingested after revision `sha` that are not rewritten
  // away, oldest first; `kind` "" = any. Empty when `sha` is not a revision of `repo`.
  Result<std::vector<ChangeRecord>> ChangesAfter(const std::string& repo, const std::string& sha,
                                                 const std::string& kind);
  // ChangesAfter(repo, sha, kind), counted by impact.
  Result<ChangeTally> TallyChangesAfter(const std::string& repo, const std::string& sha,
                                        const std::string& kind);
  // The newest behavioral or breaking change of `kind` ("" = any) in a revision of `repo` that is
  // not rewritten away.
  Result<std::optional<LastChange>> LatestChange(const std::string& repo, const std::string& kind);
  // The repos that have a revision `sha`, by id.
  Result<std::vector<std::string>> ReposWithRevision(const std::string& sha);

 private:
  // Ingest's writes of one new revision. REQUIRES: inside Ingest's transaction.
  Status InsertRevision(const RevisionIngest& in);

  Database& db_;
  AdvisoryStore& advisories_;
};

}  // namespace hubwatch::store
