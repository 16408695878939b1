#pragma once

// The mixture-of-experts half of the Llama-style decoder family (arch_llama_moe.cc): the sparse
// MLP node of a family whose LlamaFamily::moe is not kNone, and which layers of a qwen2_moe or
// qwen3_moe model carry it. Internal to the estimator: used by arch_llama.cc. Problems are
// reported through config.Fail / config.Note.

#include <cstdint>
#include <vector>

#include "estimator/config_reader.h"
#include "estimator/llama_family.h"
#include "estimator/model_graph.h"

namespace hubwatch::llama {

// The MoE node of f (f.moe != Moe::kNone): router, experts (and a shared expert) under the
// module names of its checkpoints, expert counts and widths from config (or f's defaults).
Node MoeFor(const LlamaFamily& f, ConfigReader& config, const Dims& d);

// Which layers of a qwen2_moe or qwen3_moe model are sparse: not listed in mlp_only_layers and
// every decoder_sparse_step-th.
std::vector<bool> QwenSparseLayers(ConfigReader& config, int64_t layers);

}  // namespace hubwatch::llama
