#pragma once

// The published measured runs and the released configs they are estimated from, embedded at
// build time (embed_calibration.cmake, from tests/fixtures/calibration and tests/fixtures/models).

#include <span>
#include <string_view>

namespace hubwatch::page {

struct EmbeddedConfig {
  std::string_view model;  // "meta-llama/Llama-3.2-3B"
  std::string_view json;   // its config.json
};

std::string_view EmbeddedMeasuredRuns();  // measured-memory.jsonl
std::span<const EmbeddedConfig> EmbeddedConfigs();

}  // namespace hubwatch::page
