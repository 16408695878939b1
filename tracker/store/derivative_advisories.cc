// The advisories of derivatives that lag an upstream fix: published through
// AdvisoryStore::InsertPublished, rewritten when they stop (or start again) lagging.

#include "tracker/store/derivative_advisories.h"

#include <nlohmann/json.hpp>

#include "tracker/advisory/derivative_osv.h"
#include "tracker/advisory/time_text.h"
#include "tracker/store/connection.h"

namespace hubwatch::store {

using derivatives::LagStatus;

Result<std::string> DerivativeAdvisories::Settle(const derivatives::DerivativeCheck& check,
                                                 const derivatives::AdvisoryLag& lag,
                                                 const derivatives::UpstreamFix& fix,
                                                 const diff::Change& change, int64_t now,
                                                 const DerivativeTargets& targets) {
  const std::string id = advisory::DerivativeAdvisoryId(check.id, lag.advisory_id);
  HW_PREPARE(q, "SELECT osv, published FROM advisories WHERE id = ?1");
  Result<bool> row = q.Bind(1, id).Step("reading a derivative advisory");
  if (!row.ok()) return row.error();
  const bool lagging = lag.status == LagStatus::kLagging;
  if (!*row && !lagging) return std::string();  // never lagged on this fix: nothing to say
  const std::string when = advisory::Rfc3339(now);
  advisory::DerivativeAdvisoryContext ctx{.derivative = check.id,
                                          .relation = check.relation,
                                          .upstream = check.upstream,
                                          .fix = fix,
                                          .impact = std::string(diff::ImpactName(change.impact)),
                                          .status = lag.status,
                                          .head = check.head,
                                          .checked_at = check.checked_at,
                                          .published = when,
                                          .modified = when};
  if (!*row) {
    const std::vector<std::string> to =
        targets ? targets(check.id, change) : std::vector<std::string>();
    const std::string osv = DumpJson(advisory::BuildDerivativeOsv(ctx));
    HW_TRY(advisories_.InsertPublished(
        {id, check.id, check.head, fix.change_id, fix.kind, osv, when, when, now, to, now}));
    return id;
  }
  Result<nlohmann::json> stored = StoredJson(q.Text(0), "advisory " + id);
  if (!stored.ok()) return stored.error();
  const std::optional<LagStatus> said = advisory::DerivativeOsvStatus(*stored);
  if (!said) return Error::Io("store: advisory " + id + " is damaged: no derivative status");
  if ((*said == LagStatus::kLagging) == lagging) return id;  // it says so already
  ctx.published = q.Text(1);
  HW_PREPARE(u, "UPDATE advisories SET osv = ?2, modified = ?3 WHERE id = ?1");
  HW_TRY(u.Bind(1, id)
             .Bind(2, DumpJson(advisory::BuildDerivativeOsv(ctx)))
             .Bind(3, when)
             .Run("updating derivative advisory " + id));
  return id;
}

}  // namespace hubwatch::store
