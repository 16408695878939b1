#pragma once

// The weights engine: what changed in a revision's weight files, judged from the manifests (LFS
// sha256 per file) and the parsed safetensors headers, never from the weights themselves.
//
// Files are grouped into checkpoints: the shards an index (model.safetensors.index.json,
// pytorch_model.bin.index.json) names, else the files of one shard pattern
// ("model-00001-of-00004.safetensors" -> "model.safetensors"), else each file alone. One
// kWeights change per checkpoint that changed, its path the checkpoint name
// ("model.safetensors", "text_encoder/model.safetensors"):
//   added                  behavioral (a loader may now pick it)
//   removed                breaking when no weights remain, else behavioral
//   safetensors, modified  the union of tensors over all shards, compared by name (a tensor
//                          moving between shards is not a change): tensors added / removed /
//                          reshaped are breaking; a dtype change is behavioral; total scalars
//                          before, after and delta. The same tensors (names, dtypes, shapes)
//                          with new sha256s is "values changed, shapes identical", behavioral
//                          (the Phi-3 June 2024 refresh). A shard without its header (not
//                          readable, or not given) leaves only the file-level facts, behavioral.
//   other formats          file-level: files added / removed / new sha256, behavioral.
// Index files are checked on the new side: shards it names that the manifest lacks, or tensors
// its weight_map places in a shard whose header lacks them, are breaking problems; an index
// that is not JSON is a kError change. Details are described at DiffWeights.
//
// Pure functions, thread-safe.

#include <map>
#include <string>
#include <vector>

#include "estimator/formats/safetensors_header.h"
#include "tracker/diff/change.h"
#include "tracker/diff/manifest.h"

namespace hubwatch::diff {

// Parsed safetensors headers by LFS sha256 (content-addressed, one map for both revisions).
using HeadersBySha256 = std::map<std::string, SafetensorsHeader, std::less<>>;
// Weight index files by path -> their content (*.safetensors.index.json, *.bin.index.json).
using IndexFiles = std::map<std::string, std::string, std::less<>>;

// Details of each change: {"checkpoint", "format": "safetensors" | "other", "status":
// "added" | "removed" | "modified", "files": {"added": [...], "removed": [...], "changed":
// [{"path", "old_sha256", "new_sha256", "old_size", "new_size"}]}, "tensors": {"added",
// "removed" (lists of {name, dtype, shape}, at most 50, with "added_count" / "removed_count"),
// "reshaped", "dtype_changed" ({name, old, new}), "moved_between_files"}, "scalars_before",
// "scalars_after", "scalars_delta", "values_changed", "headers_missing": [paths],
// "index_problems": [...]}; the tensor and scalar members only when every header was there.
std::vector<Change> DiffWeights(const Manifest& before, const Manifest& after,
                                const HeadersBySha256& headers,
                                const IndexFiles& before_indexes = {},
                                const IndexFiles& after_indexes = {});

// The checkpoint a weight file belongs to by its name alone: "model-00001-of-00004.safetensors"
// -> "model.safetensors", "sub/pytorch_model-00002-of-00002.bin" -> "sub/pytorch_model.bin";
// any other name is its own checkpoint.
std::string CheckpointOfShard(std::string_view path);

}  // namespace hubwatch::diff
