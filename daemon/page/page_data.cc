#include "daemon/page/page_data.h"

#include <algorithm>
#include <map>

#include "tracker/pipeline/estimate_step.h"
#include "tracker/pipeline/snapshot.h"
#include "tracker/pipeline/snapshot_loader.h"

namespace hubwatch::page {

Result<std::vector<RevisionHistory>> LoadHistory(store::Store& store, const std::string& repo,
                                                 int64_t limit) {
  Result<std::vector<store::RevisionRecord>> revisions =
      store.revisions().ListRevisions(repo, limit);
  if (!revisions.ok()) return revisions.error();
  std::vector<RevisionHistory> out;
  out.reserve(revisions->size());
  std::map<std::string, size_t, std::less<>> index;
  for (store::RevisionRecord& r : *revisions) {
    index.emplace(r.sha, out.size());
    out.push_back({std::move(r), {}});
  }
  Result<std::vector<store::ChangeRecord>> changes = store.revisions().ListChanges({.repo = repo});
  if (!changes.ok()) return changes.error();
  for (store::ChangeRecord& c : *changes) {
    auto it = index.find(c.sha);
    if (it != index.end()) out[it->second].changes.push_back(std::move(c));
  }
  for (RevisionHistory& h : out) {
    std::stable_sort(h.changes.begin(), h.changes.end(),
                     [](const auto& a, const auto& b) { return a.ordinal < b.ordinal; });
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
