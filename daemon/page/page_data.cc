#include "daemon/page/page_data.h"

#include <set>

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

Result<RevisionBasis> PrepareRevision(store::Store& store, const std::string& repo,
                                      const std::string& sha, const EstimateInput& input) {
  RevisionBasis out;
  Result<pipeline::Snapshot> snapshot =
      pipeline::LoadSnapshot(store, repo, sha, pipeline::SnapshotContents::kForEstimate);
  if (!snapshot.ok()) return snapshot.error();
  for (const diff::ManifestEntry* e : pipeline::CheckpointFiles(*snapshot)) {
    out.shard_files.push_back(e->path);
  }
  Result<EstimateBasis> basis = pipeline::BasisOf(*snapshot, input);
  if (!basis.ok()) {
    out.unavailable = basis.error().message;
    return out;
  }
  out.basis = std::move(basis).value();
  return out;
}

RevisionEstimate FinishRevision(const RevisionBasis& basis, const EstimateInput& input) {
  RevisionEstimate out;
  out.shard_files = basis.shard_files;
  if (!basis.basis) {
    out.unavailable = basis.unavailable;
    return out;
  }
  Result<Estimate> estimate = FinishEstimate(*basis.basis, input);
  if (!estimate.ok()) {
    out.unavailable = estimate.error().message;
    return out;
  }
  out.estimate = std::move(estimate).value();
  return out;
}

Result<RevisionEstimate> EstimateRevision(store::Store& store, const std::string& repo,
                                          const std::string& sha, const EstimateInput& input) {
  Result<RevisionBasis> basis = PrepareRevision(store, repo, sha, input);
  if (!basis.ok()) return basis.error();
  return FinishRevision(*basis, input);
}

Result<uint64_t> StoredHeaderBytes(store::Store& store, const std::string& repo,
                                   const std::string& sha, uint64_t stop_after) {
  Result<diff::Manifest> manifest = store.revisions().GetManifest(repo, sha);
  if (!manifest.ok()) return manifest.error();
  uint64_t bytes = 0;
  std::set<std::string> counted;
  for (const diff::ManifestEntry& e : *manifest) {
    if (!pipeline::IsSafetensorsFile(e) || !counted.insert(*e.lfs_sha256).second) continue;
    Result<std::optional<uint64_t>> size = store.revisions().HeaderBytes(*e.lfs_sha256);
    if (!size.ok()) return size.error();
    bytes += size->value_or(0);
    if (bytes > stop_after) break;
  }
  return bytes;
}

size_t RevisionBasis::ApproxBytes() const {
  size_t bytes = sizeof(*this) + unavailable.size();
  for (const std::string& f : shard_files) bytes += sizeof(f) + f.size();
  return bytes + (basis ? basis->ApproxBytes() : 0);
}

}  // namespace hubwatch::page
