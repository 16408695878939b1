// The mixture-of-experts builders of the Llama-style decoder family (llama_moe.h): mixtral,
// qwen2_moe, qwen3_moe, olmoe and granitemoe, each its router and experts under its own names.

#include "estimator/llama_moe.h"

#include <string>
#include <utility>
#include <vector>

#include "estimator/graph_builder.h"

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
      shape.experts = config.Positive({"num_local_experts"}, kMaxExperts, 8,
                                      "num_local_experts absent: Mixtral's default 8");
      shape.top_k = config.Positive({"num_experts_per_tok"}, kMaxExperts, 2,
                                    "num_experts_per_tok absent: Mixtral's default 2");
      shape.expert_intermediate = d.intermediate;
      n.module = "model.layers.{i}.block_sparse_moe";
      AddLinear(n, "gate", d.hidden, shape.experts, false);
      AddExperts(n, {{"w1", false}, {"w2", true}, {"w3", false}}, "experts.{e}.", d.hidden,
                 shape.expert_intermediate, shape.experts);
      break;
    case Moe::kQwen2Moe:
      shape.experts = config.Positive({"num_experts"}, kMaxExperts, 60,
                                      "num_experts absent: Qwen2-MoE's default 60");
      shape.top_k = config.Positive({"num_experts_per_tok"}, kMaxExperts, 4,
                                    "num_experts_per_tok absent: Qwen2-MoE's default 4");
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
        AddLinear(n, "shared_expert.gate_proj", d.hidden, shape.shared_intermediate, false);
        AddLinear(n, "shared_expert.up_proj", d.hidden, shape.shared_intermediate, false);
        AddLinear(n, "shared_expert.down_proj", shape.shared_intermediate, d.hidden, false);
        AddLinear(n, "shared_expert_gate", d.hidden, 1, false);
      }
      break;
    case Moe::kQwen3Moe:
      // Qwen3MoeConfig maps num_local_experts to num_experts.
      shape.experts = config.Positive({"num_experts", "num_local_experts"}, kMaxExperts, 128,
                                      "num_experts absent: Qwen3-MoE's default 128");
      shape.top_k = config.Positive({"num_experts_per_tok"}, kMaxExperts, 8,
                                    "num_experts_per_tok absent: Qwen3-MoE's default 8");
      shape.expert_intermediate = config.Positive({"moe_intermediate_size"}, kMaxWidth, 768,
                                                  "moe_intermediate_size absent: default 768");
      n.module = "model.layers.{i}.mlp";
      AddLinear(n, "gate", d.hidden, shape.experts, false);
      AddExperts(n, gate_up_down, "experts.{e}.", d.hidden, shape.expert_intermediate,
                 shape.experts);
      break;
    case Moe::kOlmoe:
      shape.experts = config.Positive({"num_experts"}, kMaxExperts, 64,
                                      "num_experts absent: OLMoE's default 64");
      shape.top_k = config.Positive({"num_experts_per_tok"}, kMaxExperts, 8,
                                    "num_experts_per_tok absent: OLMoE's default 8");
      shape.expert_intermediate = d.intermediate;
      n.module = "model.layers.{i}.mlp";
      AddLinear(n, "gate", d.hidden, shape.experts, false);
      AddExperts(n, gate_up_down, "experts.{e}.", d.hidden, shape.expert_intermediate,
                 shape.experts);
      break;
    case Moe::kGraniteMoe:
      shape.experts = config.Positive({"num_local_experts"}, kMaxExperts, 8,
                                      "num_local_experts absent: Granite-MoE's default 8");
      shape.top_k = config.Positive({"num_experts_per_tok"}, kMaxExperts, 2,
                                    "num_experts_per_tok absent: Granite-MoE's default 2");
      shape.expert_intermediate = d.intermediate;
      n.module = "model.layers.{i}.block_sparse_moe";
      AddLinear(n, "router.layer", d.hidden, shape.experts, false);
      // input_linear holds gate and up of every expert ([experts, 2 * intermediate, hidden]).
      AddFusedExperts(n, "input_linear", shape.experts, d.hidden, 2 * shape.expert_intermediate);
      AddFusedExperts(n, "output_linear", shape.experts, shape.expert_intermediate, d.hidden);
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
      (f.moe == Moe::kGraniteMoe ? ", fused per layer" : "");
  return n;
}

std::vector<bool> QwenSparseLayers(ConfigReader& config, int64_t layers) {
  std::vector<bool> sparse(static_cast<size_t>(layers), true);
  const int64_t step = config.Positive({"decoder_sparse_step"}, kMaxLayers, 1);
  for (int64_t i = 0; i < layers; ++i) sparse[static_cast<size_t>(i)] = (i + 1) % step == 0;
  for (int64_t i : config.IntList({"mlp_only_layers"})) {
    if (i >= 0 && i < layers) sparse[static_cast<size_t>(i)] = false;
  }
  return sparse;
}

}  // namespace hubwatch::llama
