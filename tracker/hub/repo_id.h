#pragma once

// Repo id rules (huggingface_hub validate_repo_id, ASCII by choice): an optional namespace and a
// name of 1..96 characters from [A-Za-z0-9_.-], each starting and ending with [A-Za-z0-9_], at
// most one '/', no "--" or "..", not ending in ".git". Pure functions.

#include <string_view>

#include "estimator/result.h"

namespace hubwatch::hub {

Status ValidateRepoId(std::string_view repo_id);

// true iff `text` is 40 lower-case hex digits (a full commit id).
bool IsCommitId(std::string_view text);

}  // namespace hubwatch::hub
