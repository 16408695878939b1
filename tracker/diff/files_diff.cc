#include "tracker/diff/files_diff.h"

#include <algorithm>
#include <map>
#include <set>

#include "tracker/diff/json_text.h"
#include "tracker/diff/tracked_files.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

constexpr size_t kNamedInSummary = 3;
// Each list in the details: its first kMaxListed files (paths cut to about kMaxListedBytes)
// and a count. A commit can add a million files.
constexpr size_t kMaxListed = 200;
constexpr size_t kMaxListedBytes = 512;

std::string Tagged(std::string_view path) {
  const FileRole role = RoleOfPath(path);
  std::string out = SanitizeUtf8(path);
  if (role != FileRole::kNone) out += " [" + std::string(FileRoleName(role)) + "]";
  return out;
}

std::string Listing(const char* verb, const std::vector<std::string>& items) {
  std::string out = std::string(verb) + ": ";
  for (size_t i = 0; i < items.size() && i < kNamedInSummary; ++i) {
    out += (i ? ", " : "") + items[i];
  }
  if (items.size() > kNamedInSummary) {
    out += " (+" + std::to_string(items.size() - kNamedInSummary) + " more)";
  }
  return out;
}

}  // namespace

std::vector<Change> DiffFiles(const Manifest& before, const Manifest& after) {
  const auto old_files = IndexByPath(before);
  const auto new_files = IndexByPath(after);
  std::vector<const ManifestEntry*> added;
  std::vector<const ManifestEntry*> removed;
  std::vector<const ManifestEntry*> modified_code;
  for (const auto& [path, entry] : new_files) {
    auto old = old_files.find(path);
    if (old == old_files.end()) {
      added.push_back(entry);
    } else if (old->second->content_id() != entry->content_id() &&
               RoleOfPath(path) == FileRole::kRemoteCode) {
      modified_code.push_back(entry);
    }
  }
  for (const auto& [path, entry] : old_files) {
    if (!new_files.contains(path)) removed.push_back(entry);
  }

  // Renames: a removed file's content reappearing at an added path (first by path).
  std::multimap<std::string, const ManifestEntry*> added_by_content;
  for (const ManifestEntry* entry : added) {
    if (entry->size > 0) added_by_content.emplace(entry->content_id(), entry);
  }
  std::vector<std::pair<const ManifestEntry*, const ManifestEntry*>> renamed;
  std::set<const ManifestEntry*> paired;
  for (const ManifestEntry* entry : removed) {
    if (entry->size == 0) continue;
    auto [first, last] = added_by_content.equal_range(entry->content_id());
    for (auto it = first; it != last; ++it) {
      if (paired.insert(it->second).second) {
        renamed.emplace_back(entry, it->second);
        paired.insert(entry);
        break;
      }
    }
  }
  std::erase_if(added, [&](const ManifestEntry* e) { return paired.contains(e); });
  std::erase_if(removed, [&](const ManifestEntry* e) { return paired.contains(e); });
  if (added.empty() && removed.empty() && renamed.empty() && modified_code.empty()) return {};

  Change change;
  change.kind = ChangeKind::kFiles;
  change.impact = Impact::kCosmetic;
  std::set<std::string> affects;
  auto matters = [&](std::string_view path, bool any_role) {
    const FileRole role = RoleOfPath(path);
    if (role == FileRole::kRemoteCode || (any_role && role != FileRole::kNone)) {
      change.impact = Impact::kBehavioral;
      affects.emplace(FileRoleName(role));
    }
  };
  auto entry_json = [](const ManifestEntry* e) {
    return json{{"path", SanitizeUtf8(e->path)},
                {"size", e->size},
                {"role", FileRoleName(RoleOfPath(e->path))}};
  };
  CappedList added_list(kMaxListed, kMaxListedBytes), removed_list(kMaxListed, kMaxListedBytes),
      renamed_list(kMaxListed, kMaxListedBytes), modified_list(kMaxListed, kMaxListedBytes);
  std::vector<std::string> added_names;
  std::vector<std::string> removed_names;
  std::vector<std::string> renamed_names;
  std::vector<std::string> modified_names;
  for (const ManifestEntry* e : added) {
    matters(e->path, false);
    added_list.Add(entry_json(e));
    added_names.push_back(Tagged(e->path));
  }
  for (const ManifestEntry* e : removed) {
    matters(e->path, true);
    removed_list.Add(entry_json(e));
    removed_names.push_back(Tagged(e->path));
  }
  for (const auto& [from, to] : renamed) {
    matters(from->path, true);
    matters(to->path, true);
    renamed_list.Add({{"from", SanitizeUtf8(from->path)},
                      {"to", SanitizeUtf8(to->path)},
                      {"role", FileRoleName(RoleOfPath(from->path))}});
    renamed_names.push_back(SanitizeUtf8(from->path) + " -> " + Tagged(to->path));
  }
  for (const ManifestEntry* e : modified_code) {
    matters(e->path, false);
    modified_list.Add({{"path", SanitizeUtf8(e->path)}, {"role", "remote_code"}});
    modified_names.push_back(SanitizeUtf8(e->path));
  }
  std::vector<std::string> parts;
  // Most telling first: removals and renames can break loading, additions rarely do.
  if (!removed_names.empty()) parts.push_back(Listing("removed", removed_names));
  if (!renamed_names.empty()) parts.push_back(Listing("renamed", renamed_names));
  if (!modified_names.empty()) parts.push_back(Listing("remote code modified", modified_names));
  if (!added_names.empty()) parts.push_back(Listing("added", added_names));
  change.summary = JoinSummary(parts, 240);
  change.details = ListsJson({{"added", &added_list},
                              {"removed", &removed_list},
                              {"renamed", &renamed_list},
                              {"modified", &modified_list}});
  change.details["affects"] = std::vector<std::string>(affects.begin(), affects.end());
  return {std::move(change)};
}

}  // namespace hubwatch::diff
