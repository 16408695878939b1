#pragma once

// ChangePages: the recorded changes a page at a time, through an index and from a keyset
// cursor (never an offset):
//   Newest: every repo's changes (or one repo's), newest commit first - what /changes shows.
//     The cursor is the last row's (committed_at, id); "since TIME" across every repo is a range
//     of the commit-time index (changes.committed_at, schema/migrations/0012_paged_lists.sql),
//     read from the cursor down and stopped at the page's end.
//   OfRepo: one repo's changes in the order they were recorded (id), after a change id - what
//     GET /api/v1/repos/{ns}/{name}/changes pages through.
// Both return keys; callers read the changes through RevisionStore::GetChange, so the table
// keeps one row reader.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database, which
// must outlive it.

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/database.h"
#include "tracker/store/records.h"

namespace hubwatch::store {

// Where a newest-first page starts: the changes that sort after this one (an older commit, or
// the same commit and a smaller id). id 0: from the newest.
struct ChangeCursor {
  int64_t committed_at = 0;
  int64_t id = 0;
};

// Which changes, newest first. Empty / 0 means "any".
struct ChangeSearch {
  std::string repo;
  std::string kind;
  std::string impact;
  int64_t committed_since = 0;  // committed at or after (Unix seconds), as Query's
  std::string after_revision;   // as Query's; REQUIRES repo
  ChangeCursor before;
  int64_t limit = 50;  // REQUIRES: 1 or more
};

struct ChangeKey {
  int64_t id = 0;
  int64_t committed_at = 0;
};

class ChangePages {
 public:
  explicit ChangePages(Database& db) : db_(db) {}

  Result<std::vector<ChangeKey>> Newest(const ChangeSearch& search);
  // The ids of `query.repo`'s changes after change `after_id`, by id, filtered by query's kind,
  // committed_since, after_revision and recorded_since, at most query.limit (REQUIRES >= 1).
  Result<std::vector<int64_t>> OfRepo(const Query& query, int64_t after_id);

 private:
  Database& db_;
};

}  // namespace hubwatch::store
