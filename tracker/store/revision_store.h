#pragma once

// RevisionStore: ingested revisions with their manifests, blobs, safetensors headers, changes
// and estimates.
//
// Exactly once: Ingest() writes everything one revision adds - manifest, blobs, headers,
// changes, estimate, advisories (through AdvisoryStore), outbox rows and the repo's ref cursors
// - in one transaction (the rows through RevisionWriter), and ingesting a revision already
// present changes nothing.
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
#include "tracker/store/revision_writer.h"

namespace hubwatch::store {

// A page of changes, newest first: "" / 0 = any.
struct ChangeBrowse {
  std::string repo{};
  std::string kind{};
  std::string impact{};
  int64_t before_id = 0;         // only changes with id < this
  int64_t committed_since = 0;   // as Query's ("since", since.h)
  std::string after_revision{};  // as Query's
  int64_t limit = 50;
};

class RevisionStore {
 public:
  RevisionStore(Database& db, AdvisoryStore& advisories) : db_(db), writer_(db, advisories) {}

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
  // The stored size of that header's text in bytes, without parsing it.
  Result<std::optional<uint64_t>> HeaderBytes(const std::string& sha256);

  Result<IngestOutcome> Ingest(const RevisionIngest& ingest);

  Result<std::vector<ChangeRecord>> ListChanges(const Query& query);
  // Changes newest first (by id), filtered as `browse` says.
  Result<std::vector<ChangeRecord>> BrowseChanges(const ChangeBrowse& browse);
  Result<std::vector<ChangeRecord>> ChangesOf(const std::string& repo, const std::string& sha);
  // One change by id (ChangePages finds the ids of a page).
  Result<std::optional<ChangeRecord>> GetChange(int64_t id);
  // The revision of the most recent change of this kind and path, if any: where the current
  // state of that file (or aspect) first appeared.
  Result<std::optional<std::string>> LastChangeRevision(const std::string& repo,
                                                        std::string_view kind,
                                                        const std::string& path);
  Result<std::optional<EstimateRecord>> GetEstimate(const std::string& repo,
                                                    const std::string& sha);
  // The estimate of the latest revision of `repo` that has one.
  Result<std::optional<EstimateRecord>> LatestEstimate(const std::string& repo);

 private:
  Database& db_;
  RevisionWriter writer_;  // Ingest's rows of a new revision
};

}  // namespace hubwatch::store
