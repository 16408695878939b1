#pragma once

// The syntax of what a reference holds: a Hub repo id and a revision. Every repo id and
// revision that discovery reports has passed these checks, so neither can carry raw bytes,
// spaces or control characters into a report. Pure functions.

#include <string_view>

#include "daemon/audit/reference.h"

namespace hubwatch::audit {

// Where a repo id is read, and so how much of it must be spelled out.
enum class IdContext {
  // The argument of a call or command that only takes a model (from_pretrained's first
  // argument, `vllm serve X`): a bare canonical name ("gpt2") is a Hub id there.
  kModelOnly,
  // A config value or a generic flag, where the same key often holds a local path or a label:
  // only "org/name" counts, and not one whose name ends in a file extension ("cfg/a.yaml").
  kOrgNameOnly,
};

// True when `text` is a Hub model repo id under `context`: one or two segments of
// [A-Za-z0-9._-], each 1-96 bytes, not starting or ending with '-' or '.', without "--" or "..".
bool IsHubRepoId(std::string_view text, IdContext context);

// True when `text` is plainly a filesystem path, never a Hub id ("./out", "/models/x",
// "../ckpt", "~/m", "C:\\m", "a/b/c"): such values are skipped without a report.
bool LooksLikeLocalPath(std::string_view text);

// True when `text` can be a git revision as the Hub takes it: 1-255 bytes of
// [A-Za-z0-9._/+-], not starting with '-' or '/'.
bool IsRevisionSyntax(std::string_view text);

// The kind of a revision that passed IsRevisionSyntax ("" is kFloating).
RevisionKind ClassifyRevision(std::string_view revision);

}  // namespace hubwatch::audit
