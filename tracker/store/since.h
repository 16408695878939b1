#pragma once

// "since" as a person writes it, with one meaning wherever it is taken (`hubwatch changes` and
// `hubwatch advisories`, GET /api/v1/repos/{repo}/changes and /api/v1/advisories):
//   a revision of the repo (7 to 40 hex digits, a unique prefix): what came after it in the
//     repo's history (ingest order), Query::after_revision;
//   a time: RFC 3339, a date (YYYY-MM-DD, its midnight UTC) or Unix seconds: what was committed
//     at or after it (the Hub's commit time; the first-seen time of a revision without one),
//     Query::committed_since.
// All-digit text of 7 or more digits is a revision when one of the repo matches, else a time.
// When hubwatch recorded something is a filter of its own (Query::recorded_since).
//
// Thread safety: as the Store it reads.

#include <string>

#include "estimator/base/result.h"
#include "tracker/store/records.h"
#include "tracker/store/store.h"

namespace hubwatch::store {

// Sets query.after_revision or query.committed_since from `text`. `repo` may be "" only for a
// time. Errors (InvalidInput): neither a revision nor a time, a revision without a repo, an
// ambiguous prefix, a revision the repo does not have.
Status ApplySince(Store& store, const std::string& repo, const std::string& text, Query& query);

// A revision of `repo` as a person names it: a unique prefix of its sha (7-40 hex digits) or a
// ref hubwatch tracks (its head as last seen). Errors (InvalidInput) say which it is not.
Result<std::string> ResolveRevision(Store& store, const std::string& repo, const std::string& text);

// A time as `since` reads it (RFC 3339, YYYY-MM-DD or Unix seconds); nullopt otherwise.
std::optional<int64_t> ParseSinceTime(const std::string& text);

}  // namespace hubwatch::store
