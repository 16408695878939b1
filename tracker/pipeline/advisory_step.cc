#include "tracker/pipeline/advisory_step.h"

#include <algorithm>
#include <map>
#include <utility>

#include "tracker/advisory/osv.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::pipeline {

bool IsHistory(const std::string& authored_at, int64_t first_seen_at, int64_t tracked_since) {
  return advisory::ParseTime(authored_at).value_or(first_seen_at) < tracked_since;
}

Status AdviseRevision(store::RevisionIngest& in, const PollerOptions& options,
                      int64_t tracked_since, const IntroducedLookup& introduced) {
  const store::RevisionRecord& revision = in.revision;
  const int64_t now = revision.first_seen_at;
  const bool history = IsHistory(revision.authored_at, now, tracked_since);
  std::map<std::pair<diff::ChangeKind, std::string>, int> ordinals;
  for (size_t i = 0; i < in.changes.size(); ++i) {
    const diff::Change& c = in.changes[i];
    const int ordinal = ordinals[{c.kind, c.path}]++;
    if (c.impact == diff::Impact::kCosmetic && !options.advise_cosmetic) continue;
    Result<std::optional<std::string>> since = introduced(c);
    if (!since.ok()) return since.error();
    advisory::AdvisoryContext ctx;
    ctx.repo = revision.repo;
    ctx.revision = revision.sha;
    ctx.parent = revision.parents.empty() ? std::string() : revision.parents.front();
    ctx.introduced = since->value_or("0");
    ctx.published = advisory::Rfc3339(now);  // held ones get their publish time later
    ctx.modified = ctx.published;
    ctx.committed_at = revision.authored_at;
    ctx.ordinal = ordinal;
    ctx.backfill = history;
    if (c.kind == diff::ChangeKind::kEstimate) ctx.estimate_delta = c.details["figures"];
    nlohmann::json osv = advisory::BuildOsv(c, ctx);
    store::NewAdvisory a{static_cast<int>(i), osv["id"].get<std::string>(), std::move(osv),
                         ctx.published, ctx.modified};
    if (options.outbox_targets) a.targets = options.outbox_targets(revision.repo, c, history);
    in.advisories.push_back(std::move(a));
  }
  if (const int64_t window = options.settle_window_s; window > 0) {
    // The commit's own time when it has one (a burst is upstream's), never later than now.
    const int64_t committed =
        std::min(advisory::ParseTime(revision.authored_at).value_or(now), now);
    in.settle_at = committed + window;
  }
  return Status::Ok();
}

}  // namespace hubwatch::pipeline
