#pragma once

// Manifest: the files of one revision of a model repository, as the Hub's recursive tree lists
// them (path, git blob oid, size, and for LFS/Xet files the sha256 and size of the content).
// The store keeps one per revision; the pipeline and the weights and files diff engines read
// them. Plain value types; thread-safe to read.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::diff {

struct ManifestEntry {
  std::string path;     // "model-00001-of-00004.safetensors", "text_encoder/config.json"
  std::string git_oid;  // git blob sha1 (of the LFS pointer for LFS files)
  uint64_t size = 0;    // bytes of the content (the real size for LFS files)
  std::optional<std::string> lfs_sha256;  // sha256 hex of the content, LFS/Xet files only
  std::optional<uint64_t> lfs_size;

  // What identifies the content whatever its path: the LFS sha256 when there is one, else the
  // git oid. Two entries with equal content ids hold the same bytes.
  const std::string& content_id() const { return lfs_sha256 ? *lfs_sha256 : git_oid; }
};

// In any order; paths are unique within one manifest (a later duplicate is ignored by the
// engines).
using Manifest = std::vector<ManifestEntry>;

// The manifest indexed by path (the first entry of a duplicated path wins). The pointers stay
// valid as long as `manifest` is neither modified nor destroyed.
std::map<std::string_view, const ManifestEntry*> IndexByPath(const Manifest& manifest);

}  // namespace hubwatch::diff
