#pragma once

// The advisory step: the OSV advisories of a revision about to be ingested, one per change worth
// advising (cosmetic ones only with advise_cosmetic), each with its delivery targets, and the
// settle time that holds them back while a burst of commits goes on (settle_window_s). A
// revision the repo's first poll finds committed before the repo was tracked is history: its
// advisories are published all the same, marked database_specific.backfill, and their targets
// are asked with history = true.
//
// Pure but for the `introduced` lookup, which runs on the calling thread. REQUIRES: the ingest's
// revision (repo, sha, parents, authored_at, first_seen_at) and changes are set.

#include <functional>
#include <optional>
#include <string>

#include "estimator/base/result.h"
#include "tracker/diff/change.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/records.h"

namespace hubwatch::pipeline {

// The revision where the state `change` replaces first appeared (Store::LastChangeRevision);
// nullopt when unknown.
using IntroducedLookup =
    std::function<Result<std::optional<std::string>>(const diff::Change& change)>;

// Sets in.advisories (change_ordinal: the change's index in in.changes) and, with a settle
// window, in.settle_at. The publish time is in.revision.first_seen_at; the settle time counts
// from the commit's own time, never later than that. `tracked_since`: RevisionToCommit's (when
// the repo was tracked, on its first poll; 0 later). On a lookup error `in` is left incomplete.
Status AdviseRevision(store::RevisionIngest& in, const PollerOptions& options,
                      int64_t tracked_since, const IntroducedLookup& introduced);

// Whether a revision committed at `authored_at` (RFC 3339; when unknown, first seen at
// `first_seen_at`) is history for a repo tracked since `tracked_since`.
bool IsHistory(const std::string& authored_at, int64_t first_seen_at, int64_t tracked_since);

}  // namespace hubwatch::pipeline
