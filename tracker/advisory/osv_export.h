#pragma once

// Writing advisories in the layout of an OSV database export: DIR/<id>.json for each advisory
// and DIR/all.json listing {id, modified}. DIR may be shared with other people (a checkout
// served to osv-scanner, a web root), so nothing in it is trusted:
//   - every file is written to a new temporary file in DIR (O_CREAT | O_EXCL | O_NOFOLLOW),
//     flushed with fsync and renamed over its destination, so a symbolic link planted at
//     DIR/all.json is replaced, never followed (its target is neither overwritten nor created),
//     and a reader sees the old file or the new one, never half of one;
//   - DIR is opened one component at a time (openat, missing ones created with mkdirat), each
//     without following a symbolic link: a link anywhere in DIR ("link", "link/sub",
//     "link/.", "a/link/../b") is refused, naming the component, unless follow_dir_symlink.
//     Every file is created relative to that open directory;
//   - file names come from advisory ids, which must be one plain path component: letters,
//     digits, '.', '_' and '-', not starting with '.', at most 128 bytes, and not "all" (the
//     index). The export creates no subdirectories.
// Thread safety: none needed; the function touches only what it is given.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::advisory {

struct ExportedAdvisory {
  std::string id;
  std::string modified;
  const nlohmann::json* osv = nullptr;  // REQUIRES: non-null, outlives the export
};

// Whether `id` may name DIR/<id>.json (see above).
bool IsExportableId(std::string_view id);

// Creates DIR (and its parents) when missing, then writes every advisory and all.json.
// Errors: InvalidInput when a component of DIR is a symbolic link (and !follow_dir_symlink)
// or not a directory; Io for an id that cannot be a file name (nothing is written then) or a failed
// write (the file being written is left as it was).
Status ExportOsvDatabase(const std::string& dir, const std::vector<ExportedAdvisory>& advisories,
                         bool follow_dir_symlink);

}  // namespace hubwatch::advisory
