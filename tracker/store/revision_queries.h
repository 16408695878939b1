#pragma once

// RevisionQueries: the read-only questions the HTTP API asks about a repo's history (what
// changed after a pinned revision, the latest change, revisions by sha prefix, the history's
// stamp). Where a query
// returns records, it finds their keys and reads each through RevisionStore's getters, so each
// table keeps one row reader.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database and
// the RevisionStore, which must outlive it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/database.h"
#include "tracker/store/records.h"
#include "tracker/store/revision_store.h"

namespace hubwatch::store {

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

// A repo's history in a few numbers: any ingest, rewrite or change moves at least one of them,
// so they stand for the whole history where a cache key needs it.
struct HistoryStamp {
  int64_t revisions = 0;
  int64_t rewritten_away = 0;
  std::string newest_sha;     // the most recently ingested revision ("" when none)
  std::string head_sha;       // the most recently ingested one not rewritten away ("" when none)
  int64_t newest_change = 0;  // the largest change id (0 when none)
};

class RevisionQueries {
 public:
  RevisionQueries(Database& db, RevisionStore& revisions) : db_(db), revisions_(revisions) {}

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
  // What a view of the repo's history depends on, in one indexed query (HistoryStamp).
  Result<HistoryStamp> GetHistoryStamp(const std::string& repo);
  // The repos that have a revision `sha`, by id.
  Result<std::vector<std::string>> ReposWithRevision(const std::string& sha);

 private:
  Database& db_;
  RevisionStore& revisions_;
};

}  // namespace hubwatch::store
