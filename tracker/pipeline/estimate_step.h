#pragma once

// The estimate of a revision: the estimator run on its config.json and the headers of the
// checkpoint's safetensors files, and the `estimate` change when its key figures move.
//
// Checkpoint files: those model.safetensors.index.json maps tensors to, else model.safetensors,
// else every root-level *.safetensors file. Pure functions; thread-safe.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "estimator/estimate.h"
#include "tracker/diff/change.h"
#include "tracker/pipeline/snapshot.h"
#include "tracker/store/records.h"

namespace hubwatch::pipeline {

// The checkpoint's safetensors files in `snapshot`, by path.
std::vector<const diff::ManifestEntry*> CheckpointFiles(const Snapshot& snapshot);

// True when `after` needs a new estimate: there is no previous one, or config.json or a
// checkpoint header changed.
bool NeedsEstimate(const Snapshot* before, const Snapshot& after, bool has_previous_estimate);

// The largest estimate JSON kept in the store. The estimator bounds every list upstream decides,
// so a real estimate is far smaller (DeepSeek-V3, the largest fixture: about 70 KB); a larger one
// is recorded as unavailable rather than stored.
inline constexpr size_t kMaxStoredEstimateBytes = 1 << 20;

// The estimate of `snapshot` for `input`'s workload, assumptions and cards: its config.json with
// the headers of its checkpoint files (from snapshot.headers; all of them, or none: then no
// comparison; input.headers is ignored). Without a config.json, or with
// one the estimator refuses, from the checkpoint's tensors alone, the refusal noted. Errors:
// neither a config.json nor headers (kUnsupported), or the estimator's own. What the pipeline
// stores.
Result<Estimate> EstimateOf(const Snapshot& snapshot, EstimateInput input = {});
// EstimateOf's costly part, the same for every workload (see EstimateBasis): reads input.build
// only. EstimateOf(s, input) == FinishEstimate(*BasisOf(s, input), input). The one place the
// pipeline and the model page and API (which prepare a stored revision once and finish it per
// workload) read a snapshot for an estimate.
Result<EstimateBasis> BasisOf(const Snapshot& snapshot, EstimateInput input = {});

struct EstimateOutcome {
  // Absent only without a readable config.json. When the estimator could not run, or its
  // estimate is over max_estimate_bytes of JSON, the unavailable form with the reason.
  std::optional<store::EstimateRecord> record;
  std::string skipped_because;  // why there is no estimate, for the log; empty when there is one
};
EstimateOutcome EstimateSnapshot(const std::string& repo, const Snapshot& snapshot,
                                 size_t max_estimate_bytes = kMaxStoredEstimateBytes);

// The figures worth an advisory when they move: parameter counts, KV cache per token, memory
// per mode at batch 1, and the verdict and largest batch per card and mode. Reads stored JSON
// without trusting its shape: what is missing or mistyped is null.
nlohmann::json KeyFigures(const nlohmann::json& estimate);

// An `estimate` change when the key figures differ; details = {figure: {"old", "new"}}.
// Behavioral when memory or fit moved, cosmetic otherwise. None when either side is not an
// estimate (the unavailable form): there are no figures to compare.
std::optional<diff::Change> EstimateChange(const nlohmann::json& previous,
                                           const nlohmann::json& current);

}  // namespace hubwatch::pipeline
