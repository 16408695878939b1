#include "daemon/page/page_data.h"

#include <algorithm>
#include <map>

#include "tracker/pipeline/estimate_step.h"
#include "tracker/pipeline/snapshot.h"

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
  Result<diff::Manifest> manifest = store.revisions().GetManifest(repo, sha);
  if (!manifest.ok()) return manifest.error();
  pipeline::Snapshot snapshot;
  snapshot.sha = sha;
  snapshot.manifest = std::move(manifest).value();
  for (const diff::ManifestEntry& e : snapshot.manifest) {
    if (e.path != "config.json" && e.path != "model.safetensors.index.json") continue;
    Result<std::optional<std::string>> blob = store.revisions().GetBlob(e.git_oid);
    if (!blob.ok()) return blob.error();
    if (blob->has_value()) snapshot.files.emplace(e.path, std::move(**blob));
  }
  const std::vector<const diff::ManifestEntry*> shards = pipeline::CheckpointFiles(snapshot);
  for (const diff::ManifestEntry* e : shards) {
    out.shard_files.push_back(e->path);
    Result<std::optional<SafetensorsHeader>> header = store.revisions().GetHeader(e->content_id());
    if (!header.ok()) return header.error();
    if (header->has_value()) snapshot.headers.emplace(e->content_id(), std::move(**header));
  }
  Result<Estimate> estimate = pipeline::EstimateOf(snapshot, input);
  if (!estimate.ok()) {
    out.unavailable = estimate.error().message;
    return out;
  }
  out.estimate = std::move(estimate).value();
  return out;
}

}  // namespace hubwatch::page
