#pragma once

// Committing one revision: the store's ingest built from the commit, its snapshot and the one
// before it (the changes of every diff engine unless it is the initial upload, after a history
// rewrite's own change; the
// estimate and its change; the advisories), then one Store::Ingest, which also moves the ref
// cursor, so a crash between revisions loses nothing and repeats nothing.
//
// Thread safety: runs on the thread that owns `store`, and calls the options' log and
// before_commit from it; reads nothing else shared. REQUIRES: what RevisionToCommit points to
// outlives the call.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tracker/diff/change.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/fetch_plan.h"
#include "tracker/pipeline/poller.h"
#include "tracker/pipeline/snapshot.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

// A ref whose previous head is no longer in its history (super-squash, force-push).
struct Rewrite {
  std::string previous_head;
  std::vector<std::string> rewritten_away;  // the repo's revisions no longer in any history
  size_t new_history_length = 0;            // commits in the ref's new history
};

// Whether `snapshot` holds a file a diff engine reads. A revision whose base holds none (no
// base: the first revision; an empty "initial commit"; a README alone) is the initial upload:
// there is no state before it to change, so it has no change and no advisory.
bool HoldsModelFiles(const Snapshot* snapshot);

// The `history` change of `ref`, rewritten, now at `new_head`.
diff::Change HistoryChange(const std::string& ref, const std::string& new_head,
                           const Rewrite& rewrite);

struct RevisionToCommit {
  std::string repo;
  std::string ref;  // the tracked ref that reached it; its cursor moves to the commit
  const hub::CommitInfo* commit = nullptr;
  const Snapshot* base = nullptr;  // the previous revision, the parent; null for the first
  const Snapshot* current = nullptr;
  const NewContent* fresh = nullptr;  // the content new to the store
  const Rewrite* rewrite = nullptr;   // set on the first revision of a rewritten history
  // On the repo's first poll, when it was tracked (RepoRecord::added_at): what that poll finds
  // committed before then is history. 0 on later polls: what they find is news.
  int64_t tracked_since = 0;
};

struct CommittedRevision {
  std::string error;      // non-empty: the revision was not committed
  bool ingested = false;  // false: it was already in the store
  int changes = 0;
  int advisories = 0;
  bool held = false;                 // the advisories wait for the burst to settle
  std::vector<std::string> lines{};  // for the log: the revision, then one per change
};

// Builds the ingest, runs options.before_commit, and commits. `now`: the revision's first-seen
// and publish time.
CommittedRevision CommitRevision(store::Store& store, const RevisionToCommit& r, int64_t now,
                                 const PollerOptions& options);

}  // namespace hubwatch::pipeline
