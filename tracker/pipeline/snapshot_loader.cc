#include "tracker/pipeline/snapshot_loader.h"

#include "tracker/diff/tracked_files.h"

namespace hubwatch::pipeline {

bool IsTrackedSmallFile(const diff::ManifestEntry& e) {
  if (e.lfs_sha256) return false;
  switch (diff::RoleOfPath(e.path)) {
    case diff::FileRole::kNone:
    case diff::FileRole::kWeights:
    case diff::FileRole::kRemoteCode:
      return false;
    default:
      return true;
  }
}

bool IsSafetensorsFile(const diff::ManifestEntry& e) {
  constexpr std::string_view kSuffix = ".safetensors";
  return e.lfs_sha256 && e.path.size() > kSuffix.size() &&
         e.path.compare(e.path.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

Result<Snapshot> LoadSnapshot(store::Store& store, const std::string& repo, const std::string& sha,
                              SnapshotContents contents) {
  const bool estimate_only = contents == SnapshotContents::kForEstimate;
  Snapshot s;
  s.sha = sha;
  Result<diff::Manifest> manifest = store.revisions().GetManifest(repo, sha);
  if (!manifest.ok()) return manifest.error();
  s.manifest = std::move(manifest).value();
  for (const diff::ManifestEntry& e : s.manifest) {
    const bool wanted = !estimate_only || e.path == "config.json" ||
                        e.path == "model.safetensors.index.json";
    if (IsTrackedSmallFile(e) && wanted) {
      Result<std::optional<std::string>> blob = store.revisions().GetBlob(e.git_oid);
      if (!blob.ok()) return blob.error();
      if (*blob) {
        s.files[e.path] = std::move(**blob);
      } else {
        s.unreadable[e.path] = "its content could not be read when this revision was ingested";
      }
    } else if (IsSafetensorsFile(e) && !s.headers.count(*e.lfs_sha256)) {
      Result<std::optional<SafetensorsHeader>> header = store.revisions().GetHeader(*e.lfs_sha256);
      if (!header.ok()) return header.error();
      if (*header) s.headers.emplace(*e.lfs_sha256, std::move(**header));
    }
  }
  return s;
}

}  // namespace hubwatch::pipeline
