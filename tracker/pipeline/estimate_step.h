#pragma once

// The estimate of a revision: the estimator run on its config.json and the headers of the
// checkpoint's safetensors files, and the `estimate` change when its key figures move.
//
// Checkpoint files: those model.safetensors.index.json maps tensors to, else model.safetensors,
// else every root-level *.safetensors file. Pure functions; thread-safe.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tracker/diff/change.h"
#include "tracker/pipeline/snapshot.h"
#include "tracker/store/records.h"

namespace hubwatch::pipeline {

// The checkpoint's safetensors files in `snapshot`, by path.
std::vector<const diff::ManifestEntry*> CheckpointFiles(const Snapshot& snapshot);

// True when `after` needs a new estimate: there is no previous one, or config.json or a
// checkpoint header changed.
bool NeedsEstimate(const Snapshot* before, const Snapshot& after, bool has_previous_estimate);

struct EstimateOutcome {
  std::optional<store::EstimateRecord> record;  // absent when the estimator could not run
  std::string skipped_because;                  // why not, for the log
};
EstimateOutcome EstimateSnapshot(const std::string& repo, const Snapshot& snapshot);

// The figures worth an advisory when they move: parameter counts, KV cache per token, memory
// per mode at batch 1, and the verdict and largest batch per card and mode.
nlohmann::json KeyFigures(const nlohmann::json& estimate);

// An `estimate` change when the key figures differ; details = {figure: {"old", "new"}}.
// Behavioral when memory or fit moved, cosmetic otherwise.
std::optional<diff::Change> EstimateChange(const nlohmann::json& previous,
                                           const nlohmann::json& current);

}  // namespace hubwatch::pipeline
