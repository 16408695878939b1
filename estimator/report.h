#pragma once

// Renderings of an Estimate: the machine form (JSON, schema/estimate.schema.json), a readable
// text report and its Markdown twin. Both human forms show the same sections: parameters, KV
// cache, memory per mode, fit per card, cost, structure, checkpoint comparison, lints and every
// assumption. Pure functions; thread-safe.

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "estimator/estimate.h"

namespace hubwatch {

inline constexpr const char kEstimateSchemaId[] = "hubwatch.estimate/1";

// Lists whose length upstream decides (the checkpoint's missing, unexpected and mismatched
// tensors) show at most this many entries in the JSON, and count the rest; the text and
// Markdown reports show five.
inline constexpr size_t kMaxReportedItems = 20;
// The structure's nodes list their tensors up to this many in all (a modelled graph has a few
// hundred templates; one built from a checkpoint up to kMaxCheckpointSpecs); a node past it
// lists none and says how many it holds ("tensors_omitted"), so that a stored estimate stays
// far under the store's 1 MiB whatever the checkpoint held.
inline constexpr size_t kMaxListedTensors = 4096;

nlohmann::json EstimateToJson(const Estimate& estimate);
std::string RenderText(const Estimate& estimate);
std::string RenderMarkdown(const Estimate& estimate);

// Layer index ranges of each block template: "0-41", "0, 2-26".
std::string LayerRanges(const ModelGraph& graph, int block);

}  // namespace hubwatch
