#pragma once

// --fix: rewrites the revision literal of each reference pinned to a revision that upstream
// changes affect, to the revision that takes every fix (Finding::suggested_revision). Only the
// revision literal changes: every occurrence in the file of the old sha as a whole token (not
// inside a longer run of letters and digits) is replaced, so a pin held in a variable is fixed
// where it is assigned. A floating reference is never rewritten (there is no literal to change:
// the report says what to add). Each file is replaced atomically (a temporary beside it, then
// rename; its mode kept), so an interrupted fix leaves the old file or the new one. Not
// thread-safe with other writers of the same files.

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

// `text` with every whole-token occurrence of `from` replaced by `to`; `count` gets how many.
std::string ReplaceToken(const std::string& text, const std::string& from, const std::string& to,
                         int* count);

}  // namespace hubwatch::audit
