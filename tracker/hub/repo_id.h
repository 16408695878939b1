#pragma once

// Repo id rules (huggingface_hub validate_repo_id, ASCII by choice): an optional namespace and a
// name of 1..96 characters from [A-Za-z0-9_.-], each starting and ending with [A-Za-z0-9_], at
// most one '/', no "--" or "..", not ending in ".git". Ref names as git allows them, narrowed
// to printable ASCII. Pure functions; errors quote at most 64 characters of the value.

#include <cstddef>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::hub {

Status ValidateRepoId(std::string_view repo_id);

// The most refs one repo may track (the admin API and the configuration).
inline constexpr size_t kMaxTrackedRefs = 16;

// A branch or tag name to track: 1..255 printable ASCII characters without space, '~', '^' or
// ':', not starting with '-' or '/', not ending with '/', no "..".
Status ValidateRefName(std::string_view ref);

// A pin: the revision a user runs, as 7 to 40 lower-case hex digits of its sha. At most
// kMaxPins per repo.
inline constexpr size_t kMaxPins = 16;
Status ValidatePin(std::string_view pin);

// true iff `text` is 40 lower-case hex digits (a full commit id).
bool IsCommitId(std::string_view text);

}  // namespace hubwatch::hub
