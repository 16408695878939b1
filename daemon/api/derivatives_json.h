#pragma once

// JSON views of a tracked repo's derivatives, shared by GET /api/v1/repos/{ns}/{name}/derivatives
// and `hubwatch derivatives --json`, and the derivative counts every route serving an upstream
// advisory's OSV record adds to it at serve time (database_specific.derivatives; never stored).
//
// Pure but for WithDerivativeCounts, which reads the store it is given on the calling thread.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/derivatives/derivative.h"
#include "tracker/store/store.h"

namespace hubwatch::api {

// {"fixed": n, "lagging": n, "diverged": n, "not_applicable": n, "unchecked": n}
nlohmann::json LagCountsJson(const derivatives::LagCounts& counts);
// {"derivatives", "checked", "lagging", "fixed", "diverged", "not_applicable", "unchecked"}
nlohmann::json DerivativeTallyJson(const store::DerivativeTally& tally);
// {"id", "relation", "head", "checked_at" (RFC 3339 or null), "error" (when any),
//  "status": its worst status ("lagging", "diverged", "fixed", "not_applicable"), or
//  "unchecked" when it is not current (DerivativeRecord::current),
//  "downloads", "likes", "created_at" (null when unknown): what it is ranked by,
//  "advisories": [{"id", "status", "derivative_advisory" (when any)}]}. The advisories of a
//  derivative that is not current say "unchecked", with what its last check found in
//  "last_status": a status older than upstream's newest fix is never shown as fixed.
nlohmann::json DerivativeJson(const derivatives::DerivativeRecord& derivative);
// {"id", "relation", "reason" (EvictionReasonName), "detail", "evicted_at" (RFC 3339),
//  "downloads", "likes", "created_at" (null when unknown)}
nlohmann::json EvictionJson(const derivatives::Eviction& eviction);
// {"repo": repo, "derivatives": [DerivativeJson...], "counts": DerivativeTallyJson,
//  "evicted": [EvictionJson...] (the newest first)}
nlohmann::json DerivativesJson(const std::string& repo,
                               const std::vector<derivatives::DerivativeRecord>& list,
                               const store::DerivativeTally& tally,
                               const std::vector<derivatives::Eviction>& evicted);

// Sets osv.database_specific.derivatives (LagCountsJson) on each of `advisories` that some
// derivative was checked against; the others are left as they are. One CountsByAdvisory per
// repo among them.
Status WithDerivativeCounts(store::Store& reads, std::vector<store::AdvisoryRecord>& advisories);

}  // namespace hubwatch::api
