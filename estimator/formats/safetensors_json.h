#pragma once

// A safetensors header that is already a parsed JSON value: one entry of a JSON document that
// carries headers (POST /api/v1/plan's {"safetensors_headers": [...]}, or a body that is a header),
// validated as ParseSafetensorsHeader validates the text, without printing and parsing it again.
// Apart from safetensors_header.h so that the many files that read headers do not see nlohmann.

#include <nlohmann/json_fwd.hpp>

#include "estimator/base/result.h"
#include "estimator/formats/safetensors_header.h"

namespace hubwatch {

// REQUIRES: `root` was parsed from text the caller bounded (size and nesting); the tensor count
// is checked here, after the parse.
Result<SafetensorsHeader> SafetensorsHeaderFromJson(const nlohmann::json& root);

}  // namespace hubwatch
