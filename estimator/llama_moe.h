#pragma once

// The mixture-of-experts half of the Llama-style decoder family (arch_llama_moe.cc): the sparse
// MLP node of a family whose LlamaFamily::moe is not kNone, and which layers carry it. Internal to
// the estimator: used by arch_llama.cc. Problems are reported through config.Fail / config.Note.

#include <cstdint>
#include <vector>

#include "estimator/config_reader.h"
#include "estimator/llama_family.h"
#include "estimator/model_graph.h"

namespace hubwatch::llama {

// The MoE node of f (f.moe != Moe::kNone): router, experts (and a shared expert) under the
// module names of its checkpoints, expert counts and widths from config (or f's defaults).
Node MoeFor(const LlamaFamily& f, ConfigReader& config, const Dims& d);

// Which layers carry the MoE node (true) rather than a dense MLP of intermediate_size: qwen2_moe
// and qwen3_moe every decoder_sparse_step-th layer not in mlp_only_layers, glm4_moe those from
// first_k_dense_replace on, ernie4_5_moe every moe_layer_interval-th from moe_layer_start_index
// to moe_layer_end_index; every layer for the other families.
std::vector<bool> SparseLayers(const LlamaFamily& f, ConfigReader& config, int64_t layers);

}  // namespace hubwatch::llama
