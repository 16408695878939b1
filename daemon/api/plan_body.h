#pragma once

// What POST /api/v1/plan and the /plan form accept as the model to estimate:
//   - a config.json;
//   - a checkpoint shard's safetensors header: its JSON, or the start of the .safetensors file
//     (8-byte length + header) — an estimate from the checkpoint's tensors when the architecture
//     is not modelled;
//   - both, in one envelope: {"config": {...}, "safetensors_headers": [{...}, ...]} (either
//     member may be left out), which also compares a modelled structure with its checkpoint.
// A model.safetensors.index.json is refused with what to send instead: it names each tensor's
// shard, not its shape or dtype. Pure functions; thread-safe.

#include <string_view>

#include "estimator/base/result.h"
#include "estimator/estimate.h"

namespace hubwatch::api {

// The estimate of `body` read as above. Errors: kInvalidInput for a malformed body or model
// (HTTP 400), kUnsupported for a well-formed one that cannot be estimated (422).
Result<Estimate> EstimatePlanBody(std::string_view body, EstimateInput input);

}  // namespace hubwatch::api
