#pragma once

// The files engine: the repository's file list between two revisions. One kFiles change (or
// none) per revision, listing files added, removed and renamed (the same content, by LFS sha256
// or git oid, at another path; empty files are never paired), and remote code (*.py) modified.
//
// Impact: cosmetic, unless a removed or renamed file is one another engine reads (config,
// tokenizer, chat template, weights, index, processor config: behavioral, and the summary names
// the role, "removed: tokenizer.json [tokenizer]"), or remote code (*.py, which
// trust_remote_code runs) was added, removed, renamed or modified (behavioral). The other
// engines report what such a file's content change means; this one says the file list moved.
//
// Details: {"added": [{path, size, role}], "removed": [...], "renamed": [{from, to, role}],
// "modified": [{path, role}] (remote code only), "affects": [roles]}.
//
// Pure functions, thread-safe.

#include <vector>

#include "tracker/diff/change.h"
#include "tracker/diff/manifest.h"

namespace hubwatch::diff {

std::vector<Change> DiffFiles(const Manifest& before, const Manifest& after);

}  // namespace hubwatch::diff
