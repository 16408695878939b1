#pragma once

// --fix: rewrites the revision literal of each reference pinned to a revision that upstream
// changes affect, to the revision that takes every fix (Finding::suggested_revision). Only the
// places the scan found the literal written change (ModelReference::revision_at: the literal
// itself, or the shell word holding it, where the literal must occur exactly once as a whole
// token), never other occurrences of the same text, so a pin held in a variable is fixed where
// it is assigned and a number equal to a digits-only short sha elsewhere is left alone. A
// floating reference is never rewritten (there is no literal to change: the report says what to
// add). A file is rewritten all or nothing: when any of its places no longer holds what the scan
// read there, it is left as it was and the error says why.
//
// The file is reached from its scan root one directory at a time without following symbolic
// links (dir_fd.h), read and replaced atomically in that directory (replace_at.h; its mode
// kept), so a directory of the tree swapped for a link after the scan is refused, never written
// through. Not thread-safe with other writers of the same files.

#include <string>
#include <vector>

#include "daemon/audit/judgement.h"

namespace hubwatch::audit {

struct FileFix {
  std::string file{};   // as the report names it
  int replaced = 0;     // revision literals rewritten
  std::string error{};  // non-empty: the file was left as it was, and why
};

// `roots`: the scan's roots, to find the files the report names relative to them.
std::vector<FileFix> ApplyFixes(const std::vector<std::string>& roots,
                                const std::vector<Finding>& findings);

}  // namespace hubwatch::audit
