#include "tracker/diff/weights_diff.h"

#include <algorithm>

#include "tracker/diff/json_text.h"
#include "tracker/diff/tracked_files.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

// Every list in a weights change holds at most kMaxListed items (with a count of all), each
// member cut to about kMaxListedBytes: upstream decides how many tensors and files there are
// (1M tensors in a header) and how long their names are.
constexpr size_t kMaxListed = 50;
constexpr size_t kMaxListedBytes = 512;

CappedList List() { return CappedList(kMaxListed, kMaxListedBytes); }
// A revision can hold any number of checkpoints (every unsharded weight file is one): changes
// for at most this many, then one for the rest (CapChanges).
constexpr size_t kMaxCheckpointChanges = 32;

bool IsSafetensors(std::string_view path) { return path.ends_with(".safetensors"); }

std::string DirOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash + 1));
}

struct Checkpoint {
  std::map<std::string, const ManifestEntry*> files;  // path -> entry
  std::string index_path;                             // "" when no index
  std::map<std::string, std::string> weight_map;      // tensor -> shard path
};
using Checkpoints = std::map<std::string, Checkpoint>;

// Groups a revision's weight files into checkpoints; index files that cannot be read are
// appended to `errors` as (path, message).
Checkpoints Group(const Manifest& manifest, const IndexFiles& indexes,
                  std::vector<std::pair<std::string, std::string>>& errors) {
  Checkpoints checkpoints;
  std::map<std::string, std::string> shard_to_checkpoint;
  for (const auto& [index_path, text] : indexes) {
    Result<json> doc = ParseJson(text);
    if (!doc.ok()) {
      errors.emplace_back(index_path, doc.error().message);
      continue;
    }
    auto map = doc->is_object() ? doc->find("weight_map") : doc->end();
    if (!doc->is_object() || map == doc->end() || !map->is_object()) {
      errors.emplace_back(index_path, "no \"weight_map\" object");
      continue;
    }
    std::string name = index_path;
    if (name.ends_with(".index.json")) {
      name.resize(name.size() - std::string_view(".index.json").size());
    }
    Checkpoint& checkpoint = checkpoints[name];
    checkpoint.index_path = index_path;
    for (auto it = map->begin(); it != map->end(); ++it) {
      if (!it->is_string()) continue;
      const std::string shard = DirOf(index_path) + it->get<std::string>();
      checkpoint.weight_map[it.key()] = shard;
      shard_to_checkpoint[shard] = name;
    }
  }
  for (const ManifestEntry& entry : manifest) {
    if (RoleOfPath(entry.path) != FileRole::kWeights) continue;
    auto indexed = shard_to_checkpoint.find(entry.path);
    const std::string name =
        indexed != shard_to_checkpoint.end() ? indexed->second : CheckpointOfShard(entry.path);
    checkpoints[name].files.emplace(entry.path, &entry);
  }
  return checkpoints;
}

struct TensorAt {
  const SafetensorsTensor* tensor;
  std::string file;
};

// The union of the tensors of a checkpoint's safetensors files (the first shard holding a name
// wins); files without a header go to `missing`.
std::map<std::string, TensorAt> TensorUnion(const Checkpoint& checkpoint,
                                            const HeadersBySha256& headers,
                                            std::vector<std::string>& missing) {
  std::map<std::string, TensorAt> tensors;
  for (const auto& [path, entry] : checkpoint.files) {
    if (!IsSafetensors(path)) continue;
    auto header = entry->lfs_sha256 ? headers.find(*entry->lfs_sha256) : headers.end();
    if (header == headers.end()) {
      missing.push_back(path);
      continue;
    }
    for (const auto& [name, tensor] : header->second.tensors) {
      tensors.emplace(name, TensorAt{&tensor, path});
    }
  }
  return tensors;
}

uint64_t Scalars(const std::map<std::string, TensorAt>& tensors) {
  uint64_t total = 0;
  for (const auto& [name, at] : tensors) total += at.tensor->elements;
  return total;
}

json TensorJson(const std::string& name, const SafetensorsTensor& t) {
  return {{"name", name}, {"dtype", t.dtype}, {"shape", t.shape}};
}

std::string Short(std::string_view sha) { return std::string(sha.substr(0, 12)); }

// Problems of the new side's index: shards it names that are not there, tensors it places in a
// shard whose header does not hold them.
CappedList IndexProblems(const Checkpoint& checkpoint, const HeadersBySha256& headers) {
  CappedList problems = List();
  if (checkpoint.index_path.empty()) return problems;
  std::map<std::string, std::vector<std::string>> by_shard;
  for (const auto& [tensor, shard] : checkpoint.weight_map) by_shard[shard].push_back(tensor);
  for (const auto& [shard, tensors] : by_shard) {
    auto file = checkpoint.files.find(shard);
    if (file == checkpoint.files.end()) {
      problems.Add(checkpoint.index_path + " names " + shard + ", which is not in the revision");
      continue;
    }
    if (!IsSafetensors(shard) || !file->second->lfs_sha256) continue;
    auto header = headers.find(*file->second->lfs_sha256);
    if (header == headers.end()) continue;
    for (const std::string& tensor : tensors) {
      if (!header->second.tensors.contains(tensor)) {
        problems.Add(checkpoint.index_path + " places " + tensor + " in " + shard +
                     ", whose header lacks it");
      }
    }
  }
  return problems;
}

// Files of a checkpoint added, removed, or with new content.
struct FileLists {
  CappedList added = List();
  CappedList removed = List();
  CappedList changed = List();
  bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};

FileLists CompareFiles(const Checkpoint& before, const Checkpoint& after) {
  FileLists lists;
  auto entry_json = [](const std::string& path, const ManifestEntry* e) {
    return json{{"path", path}, {"sha256", e->content_id()}, {"size", e->size}};
  };
  for (const auto& [path, entry] : after.files) {
    auto old = before.files.find(path);
    if (old == before.files.end()) {
      lists.added.Add(entry_json(path, entry));
    } else if (old->second->content_id() != entry->content_id()) {
      lists.changed.Add({{"path", path},
                         {"old_sha256", old->second->content_id()},
                         {"new_sha256", entry->content_id()},
                         {"old_size", old->second->size},
                         {"new_size", entry->size}});
    }
  }
  for (const auto& [path, entry] : before.files) {
    if (!after.files.contains(path)) lists.removed.Add(entry_json(path, entry));
  }
  return lists;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Compares the tensor unions of a modified checkpoint: details["tensors"], the scalar counts,
// "values_changed"; summary parts; breaking when tensors were added, removed or reshaped.
void CompareTensors(const std::map<std::string, TensorAt>& before,
                    const std::map<std::string, TensorAt>& after, const FileLists& files,
                    size_t file_count, Change& change, std::vector<std::string>& parts) {
  CappedList added = List(), removed = List(), reshaped = List(), dtype_changed = List();
  size_t moved = 0;
  for (const auto& [name, at] : after) {
    auto old = before.find(name);
    if (old == before.end()) {
      added.Add(TensorJson(name, *at.tensor));
      continue;
    }
    const SafetensorsTensor& was = *old->second.tensor;
    if (was.shape != at.tensor->shape) {
      reshaped.Add({{"name", name}, {"old", was.shape}, {"new", at.tensor->shape}});
    }
    if (was.dtype != at.tensor->dtype) {
      dtype_changed.Add({{"name", name}, {"old", was.dtype}, {"new", at.tensor->dtype}});
    }
    if (old->second.file != at.file) ++moved;
  }
  for (const auto& [name, at] : before) {
    if (!after.contains(name)) removed.Add(TensorJson(name, *at.tensor));
  }
  const uint64_t scalars_before = Scalars(before);
  const uint64_t scalars_after = Scalars(after);
  const int64_t delta = static_cast<int64_t>(scalars_after) - static_cast<int64_t>(scalars_before);
  const bool same_tensors =
      added.empty() && removed.empty() && reshaped.empty() && dtype_changed.empty();
  const bool values_changed = same_tensors && !files.empty();
  change.details["tensors"] = ListsJson({{"added", &added},
                                         {"removed", &removed},
                                         {"reshaped", &reshaped},
                                         {"dtype_changed", &dtype_changed}});
  change.details["tensors"]["moved_between_files"] = moved;
  change.details["scalars_before"] = scalars_before;
  change.details["scalars_after"] = scalars_after;
  change.details["scalars_delta"] = delta;
  change.details["values_changed"] = values_changed;

  auto first_name = [](const CappedList& list) {
    return CutText(list.first()["name"].get<std::string>(), 80);
  };
  if (!added.empty()) {
    parts.push_back("+" + Plural(added.count(), "tensor", "tensors") + " (" + first_name(added) +
                    ")");
  }
  if (!removed.empty()) {
    parts.push_back("-" + Plural(removed.count(), "tensor", "tensors") + " (" +
                    first_name(removed) + ")");
  }
  if (!reshaped.empty()) {
    parts.push_back(std::to_string(reshaped.count()) + " reshaped (" + first_name(reshaped) + " " +
                    ShortJson(reshaped.first()["old"], 40) + " -> " +
                    ShortJson(reshaped.first()["new"], 40) + ")");
  }
  if (!dtype_changed.empty()) {
    parts.push_back(std::to_string(dtype_changed.count()) + " dtype changed (" +
                    first_name(dtype_changed) + " " +
                    CutText(dtype_changed.first()["old"].get<std::string>(), 20) + " -> " +
                    CutText(dtype_changed.first()["new"].get<std::string>(), 20) + ")");
  }
  if (!added.empty() || !removed.empty() || !reshaped.empty()) change.impact = Impact::kBreaking;
  if (values_changed && moved == 0) {
    parts.push_back("values changed, shapes identical (" + std::to_string(files.changed.count()) +
                    " of " + Plural(file_count, "file", "files") + " new content)");
  } else if (values_changed) {
    parts.push_back("re-sharded (" + Plural(moved, "tensor", "tensors") +
                    " moved between files), shapes identical");
  }
  if (delta != 0) {
    parts.push_back("scalars " + std::to_string(scalars_before) + " -> " +
                    std::to_string(scalars_after) + " (" + (delta > 0 ? "+" : "") +
                    std::to_string(delta) + ")");
  }
}

// What can be said of a modified checkpoint without all its headers.
void CompareFilesOnly(const FileLists& files, size_t headers_missing,
                      std::vector<std::string>& parts) {
  if (!files.added.empty()) parts.push_back("+" + Plural(files.added.count(), "file", "files"));
  if (!files.removed.empty()) {
    parts.push_back("-" + Plural(files.removed.count(), "file", "files"));
  }
  if (files.changed.count() == 1) {
    const json& c = files.changed.first();
    parts.push_back(c["path"].get<std::string>() + " new content (sha256 " +
                    Short(c["old_sha256"].get<std::string>()) + " -> " +
                    Short(c["new_sha256"].get<std::string>()) + ")");
  } else if (!files.changed.empty()) {
    parts.push_back(std::to_string(files.changed.count()) + " files new content");
  }
  if (headers_missing > 0) {
    parts.push_back("headers unavailable for " + Plural(headers_missing, "file", "files"));
  }
}

// How many tensors the index moved, added or dropped.
size_t Remapped(const Checkpoint& before, const Checkpoint& after) {
  size_t remapped = 0;
  for (const auto& [tensor, shard] : after.weight_map) {
    auto old = before.weight_map.find(tensor);
    remapped += old == before.weight_map.end() || old->second != shard ? 1 : 0;
  }
  for (const auto& [tensor, shard] : before.weight_map) {
    remapped += after.weight_map.contains(tensor) ? 0 : 1;
  }
  return remapped;
}

bool HasSafetensors(const Checkpoint& checkpoint) {
  return std::any_of(checkpoint.files.begin(), checkpoint.files.end(),
                     [](const auto& file) { return IsSafetensors(file.first); });
}

// The change of one checkpoint (before or after may be null: added / removed), or nullopt.
std::optional<Change> CheckpointChange(const std::string& name, const Checkpoint* before,
                                       const Checkpoint* after, const HeadersBySha256& headers,
                                       bool weights_remain) {
  static const Checkpoint kEmpty;
  const Checkpoint& old_c = before ? *before : kEmpty;
  const Checkpoint& new_c = after ? *after : kEmpty;
  const FileLists files = CompareFiles(old_c, new_c);
  const CappedList index_problems = after ? IndexProblems(new_c, headers) : List();
  const bool map_changed = old_c.weight_map != new_c.weight_map;
  if (files.empty() && !map_changed && index_problems.empty()) return std::nullopt;

  const bool safetensors = HasSafetensors(old_c) || HasSafetensors(new_c);
  Change change;
  change.kind = ChangeKind::kWeights;
  change.path = name;
  change.impact = Impact::kBehavioral;
  change.details = {{"checkpoint", name},
                    {"format", safetensors ? "safetensors" : "other"},
                    {"status", !before  ? "added"
                               : !after ? "removed"
                                        : "modified"},
                    {"files", ListsJson({{"added", &files.added},
                                         {"removed", &files.removed},
                                         {"changed", &files.changed}})},
                    {"index_problems", index_problems.items()},
                    {"index_problem_count", index_problems.count()}};
  std::vector<std::string> missing;
  const auto old_tensors = TensorUnion(old_c, headers, missing);
  const auto new_tensors = TensorUnion(new_c, headers, missing);
  CappedList headers_missing = List();
  for (const std::string& path : missing) headers_missing.Add(path);
  change.details["headers_missing"] = headers_missing.items();
  change.details["headers_missing_count"] = missing.size();
  const bool complete = safetensors && missing.empty();

  std::vector<std::string> parts;
  if (!before || !after) {
    const Checkpoint& present = after ? new_c : old_c;
    std::string part = std::string(after ? "added (" : "removed (") +
                       Plural(present.files.size(), "file", "files");
    if (complete) {
      part += ", " + std::to_string(Scalars(after ? new_tensors : old_tensors)) + " scalars";
    }
    parts.push_back(part + ")");
    if (!after && !weights_remain) change.impact = Impact::kBreaking;
  } else if (complete) {
    CompareTensors(old_tensors, new_tensors, files, new_c.files.size(), change, parts);
  } else {
    CompareFilesOnly(files, missing.size(), parts);
  }
  if (map_changed) {
    const size_t remapped = Remapped(old_c, new_c);
    change.details["index"] = {{"path", after ? new_c.index_path : old_c.index_path},
                               {"tensors_remapped", remapped}};
    if (parts.empty()) {
      parts.push_back("index weight_map changed (" + Plural(remapped, "tensor", "tensors") +
                      "), files unchanged");
      change.impact = Impact::kCosmetic;
    }
  }
  if (!index_problems.empty()) {
    change.impact = Impact::kBreaking;
    std::string first = index_problems.first().get<std::string>();
    if (index_problems.count() > 1) {
      first += " (+" + std::to_string(index_problems.count() - 1) + " more)";
    }
    parts.insert(parts.begin(), std::move(first));
  }
  if (parts.empty()) parts.push_back("changed");
  change.summary = name + ": " + JoinSummary(parts, 220);
  return change;
}

}  // namespace

std::string CheckpointOfShard(std::string_view path) {
  for (std::string_view ext : {".safetensors", ".bin"}) {
    if (!path.ends_with(ext)) continue;
    const std::string_view stem = path.substr(0, path.size() - ext.size());
    const size_t of = stem.rfind("-of-");
    if (of == std::string_view::npos) break;
    const std::string_view total = stem.substr(of + 4);
    const size_t dash = stem.rfind('-', of == 0 ? 0 : of - 1);
    if (dash == std::string_view::npos || dash == 0) break;
    const std::string_view index = stem.substr(dash + 1, of - dash - 1);
    auto digits = [](std::string_view s) {
      return !s.empty() &&
             std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (!digits(total) || !digits(index)) break;
    return std::string(stem.substr(0, dash)) + std::string(ext);
  }
  return std::string(path);
}

std::vector<Change> DiffWeights(const Manifest& before, const Manifest& after,
                                const HeadersBySha256& headers, const IndexFiles& before_indexes,
                                const IndexFiles& after_indexes) {
  std::vector<Change> changes;
  try {
    std::vector<std::pair<std::string, std::string>> old_errors;
    std::vector<std::pair<std::string, std::string>> new_errors;
    const Checkpoints old_checkpoints = Group(before, before_indexes, old_errors);
    const Checkpoints new_checkpoints = Group(after, after_indexes, new_errors);
    for (const auto& [path, message] : new_errors) {
      auto old = before_indexes.find(path);
      auto now = after_indexes.find(path);
      if (old == before_indexes.end() || old->second != now->second) {
        changes.push_back(ErrorChange(path, message));
      }
    }
    const bool weights_remain = std::any_of(new_checkpoints.begin(), new_checkpoints.end(),
                                            [](const auto& c) { return !c.second.files.empty(); });
    for (const auto& [name, checkpoint] : new_checkpoints) {
      auto old = old_checkpoints.find(name);
      const Checkpoint* was =
          old == old_checkpoints.end() || old->second.files.empty() ? nullptr : &old->second;
      const Checkpoint* now =
          checkpoint.files.empty() && checkpoint.index_path.empty() ? nullptr : &checkpoint;
      if (!was && !now) continue;
      if (auto change = CheckpointChange(name, was, now, headers, weights_remain)) {
        changes.push_back(std::move(*change));
      }
    }
    for (const auto& [name, checkpoint] : old_checkpoints) {
      if (new_checkpoints.contains(name) || checkpoint.files.empty()) continue;
      if (auto change = CheckpointChange(name, &checkpoint, nullptr, headers, weights_remain)) {
        changes.push_back(std::move(*change));
      }
    }
  } catch (const std::exception& e) {
    changes.push_back(ErrorChange("weights", std::string("could not be diffed: ") + e.what()));
  }
  CapChanges(changes, kMaxCheckpointChanges, "weights");
  return changes;
}

}  // namespace hubwatch::diff
