#pragma once

// BuildModelGraph: config.json -> ModelGraph, per architecture, exactly as the Hugging Face
// implementation of that architecture lays out its parameters.
//
// Exact architectures: SupportedArchitectures() (README "hubwatch estimate" lists them by kind).
// Any other model_type is an Unsupported error (EstimateModel then estimates from the
// checkpoint's tensors when it has them: checkpoint_graph.h), unless BuildOptions::assume names
// a modelled one: then the config is read as that architecture and the graph is marked
// approximate, or refused where that would be wrong by most of the model (a mixture of experts
// read as dense, an encoder read as a decoder).
// Pure function of its input; thread-safe.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/model_graph.h"

namespace hubwatch {

struct BuildOptions {
  std::string assume;  // e.g. "llama": read an unsupported model_type as this architecture
};

std::vector<std::string_view> SupportedArchitectures();

Result<ModelGraph> BuildModelGraph(const nlohmann::json& config, const BuildOptions& options = {});

}  // namespace hubwatch
