// The mixture-of-experts builders of the Llama-style decoder family (llama_moe.h): mixtral,
// qwen2_moe, qwen3_moe, olmoe, granitemoe, gpt_oss, glm4_moe and ernie4_5_moe, each its router
// and experts under its own names.

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "estimator/graph_builder.h"
#include "estimator/llama_moe.h"

namespace hubwatch::llama {

using namespace build;  // NOLINT: internal helpers

namespace {

void AddExperts(Node& n, const std::vector<std::pair<const char*, bool>>& projections,
                const std::string& prefix, int64_t hidden, int64_t intermediate, int64_t experts) {
  for (const auto& [name, is_down] : projections) {
    const int64_t in = is_down ? intermediate : hidden;
    const int64_t out = is_down ? hidden : intermediate;
    TensorSpec& t = AddTensor(n, prefix + name + ".weight", {out, in});
    t.linear_in = in;
    t.linear_out = out;
    t.copies = experts;
    t.routed = true;
  }
}

// GraniteMoeParallelExperts: one [experts, out, in] parameter for all experts of a layer,
// stored as such, top_k of its slices active per token; it is no nn.Linear (F.linear per
// expert), so neither LoRA nor 4-bit quantization touches it.
void AddFusedExperts(Node& n, const std::string& name, int64_t experts, int64_t in, int64_t out) {
  TensorSpec& t = AddTensor(n, name + ".weight", {experts, out, in});
  t.experts_in_dim0 = true;
  t.routed = true;
}

// GptOssExperts: gate_up_proj [E, hidden, 2 * inter] and down_proj [E, inter, hidden], each
// with a bias [E, out]. OpenAI's checkpoints (quant_method "mxfp4") store each weight as
// <name>_blocks [E, out, in / 32, 16] U8 (two FP4 values a byte) plus <name>_scales
// [E, out, in / 32] U8 (one power-of-two scale per 32 values): the parameters are the
// bf16-equivalent count transformers dequantizes to, the scales are on disk only.
void AddGptOssExperts(Node& n, ConfigReader& config, int64_t experts, int64_t hidden,
                      int64_t inter) {
  const nlohmann::json* q = config.Find({"quantization_config"});
  const bool mxfp4 = q && q->is_object() && q->value("quant_method", "") == "mxfp4";
  constexpr int64_t kBlock = 32;  // MXFP4 values per scale
  for (const auto& [name, in, out] :
       {std::tuple<const char*, int64_t, int64_t>{"gate_up_proj", hidden, 2 * inter},
        {"down_proj", inter, hidden}}) {
    const std::string base = std::string("experts.") + name;
    if (mxfp4 && in % kBlock != 0) {
      config.Fail("mxfp4 experts need hidden_size and intermediate_size divisible by 32");
      return;
    }
    TensorSpec& w = mxfp4 ? AddTensor(n, base + "_blocks", {experts, out, in / kBlock, 16})
                          : AddTensor(n, base, {experts, in, out});
    w.experts_in_dim0 = w.routed = true;
    if (mxfp4) {
      w.dtype = "U8";
      w.packing = 2;
      TensorSpec& scales =
          AddTensor(n, base + "_scales", {experts, out, in / kBlock}, TensorRole::kExtraOnDisk);
      scales.dtype = "U8";
    }
    TensorSpec& bias = AddTensor(n, base + "_bias", {experts, out});
    bias.experts_in_dim0 = bias.routed = true;
  }
  if (mxfp4) {
    config.Note(
        "MXFP4 checkpoint: expert weights counted as the bf16 parameters transformers "
        "dequantizes them to, stored as 4-bit *_blocks (2 a byte) plus *_scales (1 byte per 32 "
        "values, on disk only), about a quarter of their bf16 bytes; serving assumes "
        "serve.weight_bytes (bf16 by default: lower it to serve the MXFP4 experts as stored)");
  }
}

void AddSharedExperts(Node& n, const std::string& prefix, int64_t hidden, int64_t inter,
                      bool bias) {
  AddLinear(n, prefix + "gate_proj", hidden, inter, bias);
  AddLinear(n, prefix + "up_proj", hidden, inter, bias);
  AddLinear(n, prefix + "down_proj", inter, hidden, bias);
}

// The expert count and top-k under the first present of their keys, else `family`'s defaults
// (noted).
void ReadRouting(ConfigReader& config, MoeShape& shape, Keys experts_keys, int64_t experts,
                 Keys top_k_keys, int64_t top_k, const std::string& family) {
  auto why = [&](Keys keys, int64_t value) {
    return std::string(*keys.begin()) + " absent: " + family + "'s default " +
           std::to_string(value);
  };
  shape.experts = config.Positive(experts_keys, kMaxExperts, experts, why(experts_keys, experts));
  shape.top_k = config.Positive(top_k_keys, kMaxExperts, top_k, why(top_k_keys, top_k));
}

}  // namespace

Node MoeFor(const LlamaFamily& f, ConfigReader& config, const Dims& d) {
  MoeShape shape;
  shape.gated = true;
  shape.activation = d.activation;
  Node n;
  n.kind = NodeKind::kMoe;
  n.output_width = d.hidden;
  const std::vector<std::pair<const char*, bool>> gate_up_down = {
      {"gate_proj", false}, {"up_proj", false}, {"down_proj", true}};
  switch (f.moe) {
    case Moe::kNone:
      break;
    case Moe::kMixtral:
      ReadRouting(config, shape, {"num_local_experts"}, 8, {"num_experts_per_tok"}, 2, "Mixtral");
      shape.expert_intermediate = d.intermediate;
      n.module = "model.layers.{i}.block_sparse_moe";
      AddLinear(n, "gate", d.hidden, shape.experts, false);
      AddExperts(n, {{"w1", false}, {"w2", true}, {"w3", false}}, "experts.{e}.", d.hidden,
                 shape.expert_intermediate, shape.experts);
      break;
    case Moe::kQwen2Moe:
      ReadRouting(config, shape, {"num_experts"}, 60, {"num_experts_per_tok"}, 4, "Qwen2-MoE");
      shape.expert_intermediate = config.Positive({"moe_intermediate_size"}, kMaxWidth, 1408,
                                                  "moe_intermediate_size absent: default 1408");
      shape.shared_intermediate =
          config.NonNegative({"shared_expert_intermediate_size"}, kMaxWidth, 5632,
                             "shared_expert_intermediate_size absent: default 5632");
      n.module = "model.layers.{i}.mlp";
      AddLinear(n, "gate", d.hidden, shape.experts, false);
      AddExperts(n, gate_up_down, "experts.{e}.", d.hidden, shape.expert_intermediate,
                 shape.experts);
      if (shape.shared_intermediate) {
        AddSharedExperts(n, "shared_expert.", d.hidden, shape.shared_intermediate, false);
        AddLinear(n, "shared_expert_gate", d.hidden, 1, false);
      }
      break;
    case Moe::kQwen3Moe:
      // Qwen3MoeConfig maps num_local_experts to num_experts.
      ReadRouting(config, shape, {"num_experts", "num_local_experts"}, 128, {"num_experts_per_tok"},
                  8, "Qwen3-MoE");
      shape.expert_intermediate = config.Positive({"moe_intermediate_size"}, kMaxWidth, 768,
                                                  "moe_intermediate_size absent: default 768");
      n.module = "model.layers.{i}.mlp";
      AddLinear(n, "gate", d.hidden, shape.experts, false);
      AddExperts(n, gate_up_down, "experts.{e}.", d.hidden, shape.expert_intermediate,
                 shape.experts);
      break;
    case Moe::kOlmoe:
      ReadRouting(config, shape, {"num_experts"}, 64, {"num_experts_per_tok"}, 8, "OLMoE");
      shape.expert_intermediate = d.intermediate;
      n.module = "model.layers.{i}.mlp";
      AddLinear(n, "gate", d.hidden, shape.experts, false);
      AddExperts(n, gate_up_down, "experts.{e}.", d.hidden, shape.expert_intermediate,
                 shape.experts);
      break;
    case Moe::kGraniteMoe:
      ReadRouting(config, shape, {"num_local_experts"}, 8, {"num_experts_per_tok"}, 2,
                  "Granite-MoE");
      shape.expert_intermediate = d.intermediate;
      n.module = "model.layers.{i}.block_sparse_moe";
      AddLinear(n, "router.layer", d.hidden, shape.experts, false);
      // input_linear holds gate and up of every expert ([experts, 2 * intermediate, hidden]).
      AddFusedExperts(n, "input_linear", shape.experts, d.hidden, 2 * shape.expert_intermediate);
      AddFusedExperts(n, "output_linear", shape.experts, shape.expert_intermediate, d.hidden);
      break;
    case Moe::kGptOss:
      ReadRouting(config, shape, {"num_local_experts"}, 128,
                  {"num_experts_per_tok", "experts_per_token"}, 4, "gpt-oss");
      shape.expert_intermediate = d.intermediate;
      n.module = "model.layers.{i}.mlp";
      // GptOssTopKRouter: bare weight and bias parameters, not an nn.Linear.
      AddTensor(n, "router.weight", {shape.experts, d.hidden});
      AddTensor(n, "router.bias", {shape.experts});
      AddGptOssExperts(n, config, shape.experts, d.hidden, d.intermediate);
      break;
    case Moe::kGlm4Moe:
      ReadRouting(config, shape, {"n_routed_experts"}, 128, {"num_experts_per_tok"}, 8,
                  "GLM-4-MoE");
      shape.expert_intermediate = config.Positive({"moe_intermediate_size"}, kMaxWidth, 1408,
                                                  "moe_intermediate_size absent: default 1408");
      shape.shared_intermediate =
          shape.expert_intermediate *
          config.NonNegative({"n_shared_experts"}, 64, 1, "n_shared_experts absent: default 1");
      n.module = "model.layers.{i}.mlp";
      // Glm4MoeTopkRouter: a bare weight parameter, and the score-correction bias of its
      // noaux_tc routing, a persistent fp32 buffer (register_buffer) the checkpoint stores.
      AddTensor(n, "gate.weight", {shape.experts, d.hidden});
      AddTensor(n, "gate.e_score_correction_bias", {shape.experts}, TensorRole::kBuffer).dtype =
          "F32";
      AddExperts(n, gate_up_down, "experts.{e}.", d.hidden, shape.expert_intermediate,
                 shape.experts);
      if (shape.shared_intermediate) {
        AddSharedExperts(n, "shared_experts.", d.hidden, shape.shared_intermediate, false);
      }
      break;
    case Moe::kErnie45Moe:
      ReadRouting(config, shape, {"moe_num_experts"}, 64, {"moe_k"}, 6, "ERNIE-4.5-MoE");
      shape.expert_intermediate = config.Positive({"moe_intermediate_size"}, kMaxWidth, 1536,
                                                  "moe_intermediate_size absent: default 1536");
      shape.shared_intermediate =
          shape.expert_intermediate *
          config.NonNegative({"moe_num_shared_experts"}, 64, 2,
                             "moe_num_shared_experts absent: ERNIE-4.5-MoE's default 2");
      n.module = "model.layers.{i}.mlp";
      AddLinear(n, "gate", d.hidden, shape.experts, false);
      // Ernie4_5_MoeStatics: a parameter with requires_grad=False, [groups = 1, experts], fp32.
      AddTensor(n, "moe_statics.e_score_correction_bias", {1, shape.experts}).dtype = "F32";
      AddExperts(n, gate_up_down, "experts.{e}.", d.hidden, shape.expert_intermediate,
                 shape.experts);
      if (shape.shared_intermediate) {
        AddSharedExperts(n, "shared_experts.", d.hidden, shape.shared_intermediate, d.mlp_bias);
      }
      break;
  }
  CheckTopK(config, shape.top_k, shape.experts);
  n.moe = shape;
  n.label =
      "MoE: " + std::to_string(shape.experts) + " experts, top-" + std::to_string(shape.top_k) +
      ", " + ActivationLabel(true, d.activation) + " " + std::to_string(shape.expert_intermediate) +
      " each" +
      (shape.shared_intermediate ? ", shared expert " + std::to_string(shape.shared_intermediate)
                                 : std::string()) +
      (f.moe == Moe::kGraniteMoe || f.moe == Moe::kGptOss ? ", fused per layer" : "");
  return n;
}

std::vector<bool> SparseLayers(const LlamaFamily& f, ConfigReader& config, int64_t layers) {
  std::vector<bool> sparse(static_cast<size_t>(layers), true);
  auto each = [&](auto&& is_sparse) {
    for (int64_t i = 0; i < layers; ++i) sparse[static_cast<size_t>(i)] = is_sparse(i);
  };
  switch (f.moe) {
    case Moe::kQwen2Moe:
    case Moe::kQwen3Moe: {
      const int64_t step = config.Positive({"decoder_sparse_step"}, kMaxLayers, 1);
      each([&](int64_t i) { return (i + 1) % step == 0; });
      for (int64_t i : config.IntList({"mlp_only_layers"})) {
        if (i >= 0 && i < layers) sparse[static_cast<size_t>(i)] = false;
      }
      break;
    }
    case Moe::kGlm4Moe: {
      const int64_t first = config.NonNegative({"first_k_dense_replace"}, kMaxLayers, 1,
                                               "first_k_dense_replace absent: default 1");
      each([&](int64_t i) { return i >= first; });
      break;
    }
    case Moe::kErnie45Moe: {
      // Ernie4_5_MoeConfig: moe_layer_end_index -1 (the default) means the last layer.
      const int64_t start = config.NonNegative({"moe_layer_start_index"}, kMaxLayers, 1,
                                               "moe_layer_start_index absent: default 1");
      const std::vector<int64_t> end_list = config.IntList({"moe_layer_end_index"});
      const int64_t end = end_list.empty() || end_list[0] < 0 ? layers - 1 : end_list[0];
      const int64_t interval = config.Positive({"moe_layer_interval"}, kMaxLayers, 1);
      each([&](int64_t i) { return (i + 1) % interval == 0 && i >= start && i <= end; });
      break;
    }
    default:
      break;
  }
  return sparse;
}

}  // namespace hubwatch::llama
