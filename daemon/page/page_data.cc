#include "daemon/page/page_data.h"

#include "tracker/pipeline/estimate_step.h"
#include "tracker/pipeline/snapshot.h"
#include "tracker/pipeline/snapshot_loader.h"

namespace hubwatch::page {

Result<std::vector<RevisionHistory>> LoadHistory(store::Store& store, const std::string& repo,
                                                 int64_t limit) {
  Result<std::vector<store::RevisionRecord>> revisions =
      store.revisions().ListRevisions(repo, limit);
  if (!revisions.ok()) return revisions.error();
  // Each listed revision's own changes (an index read each), never the repo's every change.
  std::vector<RevisionHistory> out;
  out.reserve(revisions->size());
  for (store::RevisionRecord& r : *revisions) {
    Result<std::vector<store::ChangeRecord>> changes = store.revisions().ChangesOf(repo, r.sha);
    if (!changes.ok()) return changes.error();
    out.push_back({std::move(r), std::move(changes).value()});  // ChangesOf: in ordinal order
  }
  return out;
}

Result<RevisionEstimate> EstimateRevision(store::Store& store, const std::string& repo,
                                          const std::string& sha, const EstimateInput& input) {
  RevisionEstimate out;
  Result<pipeline::Snapshot> snapshot =
      pipeline::LoadSnapshot(store, repo, sha, pipeline::SnapshotContents::kForEstimate);
  if (!snapshot.ok()) return snapshot.error();
  for (const diff::ManifestEntry* e : pipeline::CheckpointFiles(*snapshot)) {
    out.shard_files.push_back(e->path);
  }
  Result<Estimate> estimate = pipeline::EstimateOf(*snapshot, input);
  if (!estimate.ok()) {
    out.unavailable = estimate.error().message;
    return out;
  }
  out.estimate = std::move(estimate).value();
  return out;
}

}  // namespace hubwatch::page
