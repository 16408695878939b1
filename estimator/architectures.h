#pragma once

// BuildModelGraph: config.json -> ModelGraph, per architecture, exactly as the Hugging Face
// implementation of that architecture lays out its parameters.
//
// Exact architectures (model_type): llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, gemma,
// gemma2, gemma3_text, phi (also the pre-2024 phi-msft format), phi3, gpt2, gpt_neox, falcon (also
// the legacy RefinedWeb / RefinedWebModel formats), olmo, olmo2, starcoder2, deepseek_v2,
// deepseek_v3. Any other model_type is an Unsupported error, unless BuildOptions::assume names one
// of the above: then the config is read as that architecture and the graph is marked approximate.
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
