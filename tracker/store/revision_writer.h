#pragma once

// RevisionWriter: the rows one new revision adds - the revision, its manifest, blobs and
// safetensors headers (both kept once however many revisions share them), its changes
// (summaries and details bounded as diff says), its estimate, its advisories (through
// AdvisoryStore::RecordAdvisories, with their outbox rows), the repo's ref cursors and the
// revisions it rewrote away - and what the paged lists read of the repo without a subquery
// (repos.family, repos.last_change_at, changes.committed_at). RevisionStore::Ingest decides
// whether a revision is new and holds the transaction; this writes what it adds.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database and
// the AdvisoryStore, which must outlive it.

#include "estimator/base/result.h"
#include "tracker/store/advisory_store.h"
#include "tracker/store/database.h"
#include "tracker/store/records.h"

namespace hubwatch::store {

class RevisionWriter {
 public:
  RevisionWriter(Database& db, AdvisoryStore& advisories) : db_(db), advisories_(advisories) {}

  // Writes every row `in` adds; the first failure ends it (the caller's transaction rolls back).
  // REQUIRES: inside a transaction; in.revision is not stored yet.
  Status Insert(const RevisionIngest& in);

 private:
  Status UpdateListedFacts(const RevisionRecord& rev, bool changed);

  Database& db_;
  AdvisoryStore& advisories_;
};

}  // namespace hubwatch::store
