// Llama 4 (Llama4ForCausalLM, model_type llama4_text; Llama4ForConditionalGeneration, llama4).
//
// The text decoder: Llama attention (q/k/v/o, no biases) whose RoPE layers attend in chunks of
// attention_chunk_size tokens and whose every no_rope_layer_interval-th layer is global and
// without RoPE (NoPE); a weightless L2 q/k norm on the RoPE layers when use_qk_norm. The
// feed-forward of the layers in moe_layers (every interleave_moe_layer_step-th) is Llama4TextMoe:
// a sigmoid router, a shared SwiGLU expert of intermediate_size and routed experts fused into two
// tensors per layer (experts.gate_up_proj [E, hidden, 2 * intermediate], experts.down_proj
// [E, intermediate, hidden], no ".weight"); the others a dense SwiGLU of intermediate_size_mlp.
//
// The composite: vision_model (Llama4VisionModel, arch_llama4_vision.cc), the
// multi_modal_projector (one bias-free linear_1 into the text width) and the decoder under
// "language_model.", as Meta's released checkpoints store them.

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/vl_composite.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

constexpr int64_t kHeadDim = 128, kChunk = 8192, kNoRopeInterval = 4;

using multimodal::DecoderDims;

struct Llama4Dims : DecoderDims {
  int64_t intermediate_mlp, experts, top_k;
};

Node Attention(const Llama4Dims& d, bool qk_norm) {
  Node n =
      multimodal::DecoderAttention("model.layers.{i}.self_attn", "", d, KvCaching::kSelf, qk_norm);
  if (qk_norm) n.label += " (L2, no weights)";
  return n;
}

Node FeedForward(const Llama4Dims& d, bool moe) {
  if (!moe) {
    Node n = MlpNode("model.layers.{i}.feed_forward", d.hidden,
                     {d.intermediate_mlp, true, d.activation});
    multimodal::AddSwiGlu(n, "", d.hidden, d.intermediate_mlp);
    return n;
  }
  Node n;
  n.kind = NodeKind::kMoe;
  n.module = "model.layers.{i}.feed_forward";
  n.output_width = d.hidden;
  n.moe = {d.experts, d.top_k, d.intermediate, d.intermediate, true, d.activation};
  n.label = "MoE: " + std::to_string(d.experts) + " experts, top-" + std::to_string(d.top_k) +
            " (sigmoid router), " + ActivationLabel(true, d.activation) + " " +
            std::to_string(d.intermediate) + " each, shared expert " +
            std::to_string(d.intermediate) + ", experts fused per layer";
  AddLinear(n, "router", d.hidden, d.experts, false);
  for (auto [name, shape] : {std::pair<const char*, TensorShape>{
                                 "experts.gate_up_proj", {d.experts, d.hidden, 2 * d.intermediate}},
                             {"experts.down_proj", {d.experts, d.intermediate, d.hidden}}}) {
    TensorSpec& t = AddTensor(n, name, shape);
    t.experts_in_dim0 = true;
    t.routed = true;
  }
  multimodal::AddSwiGlu(n, "shared_expert.", d.hidden, d.intermediate);
  return n;
}

// Which layers are MoE: moe_layers when listed, else every interleave_moe_layer_step-th
// (Llama4TextConfig). Which use RoPE: no_rope_layers (1: RoPE) when listed, else all but every
// no_rope_layer_interval-th.
std::vector<bool> LayerFlags(ConfigReader& config, int64_t layers, const char* list_key,
                             const char* step_key, int64_t step_default, bool every_step_is) {
  std::vector<bool> flags(static_cast<size_t>(layers), !every_step_is);
  const std::vector<int64_t> listed = config.IntList({list_key});
  // An empty moe_layers means no MoE layer; an empty no_rope_layers the default pattern.
  if (every_step_is ? config.Has({list_key}) : !listed.empty()) {
    if (every_step_is) {  // moe_layers: the indices of the MoE layers
      for (int64_t i : listed) {
        if (i >= 0 && i < layers) flags[static_cast<size_t>(i)] = true;
      }
    } else {  // no_rope_layers: one 0/1 per layer (Llama4TextAttention indexes it by layer)
      if (listed.size() < flags.size()) {
        config.Fail(std::string(list_key) + " lists " + std::to_string(listed.size()) +
                    " layers, fewer than num_hidden_layers " + std::to_string(layers));
      }
      for (size_t i = 0; i < listed.size() && i < flags.size(); ++i) flags[i] = listed[i] != 0;
    }
    return flags;
  }
  const int64_t step = config.Positive({step_key}, kMaxLayers, step_default);
  for (int64_t i = 0; i < layers; ++i) {
    if ((i + 1) % step == 0) flags[static_cast<size_t>(i)] = every_step_is;
  }
  return flags;
}

void BuildLlama4Text(ConfigReader& config, ModelGraph& g) {
  Llama4Dims d{};
  static_cast<DecoderDims&>(d) = multimodal::ReadDecoderDims(config, kHeadDim);
  const int64_t layers = d.layers;
  d.intermediate_mlp = config.Positive({"intermediate_size_mlp"}, kMaxWidth);
  d.experts = config.Positive({"num_local_experts"}, kMaxExperts);
  d.top_k = config.Positive({"num_experts_per_tok"}, kMaxExperts, 1);
  CheckTopK(config, d.top_k, d.experts);
  const bool use_qk_norm = config.Flag({"use_qk_norm"}, true);
  const int64_t chunk = config.Positive({"attention_chunk_size"}, kMaxPositions, kChunk);
  const std::vector<bool> moe =
      LayerFlags(config, layers, "moe_layers", "interleave_moe_layer_step", 1, true);
  const std::vector<bool> rope = LayerFlags(config, layers, "no_rope_layers",
                                            "no_rope_layer_interval", kNoRopeInterval, false);
  if (!config.ok()) return;

  multimodal::DecoderShell(config, g, d,
                           "Llama 4 decoder: chunked-attention RoPE layers and global NoPE "
                           "layers, MoE (sigmoid top-k router, shared expert, fused experts) "
                           "interleaved with dense SwiGLU layers",
                           0);
  // One block template per (MoE, RoPE) combination in use: at most four.
  int block_of[2][2] = {{-1, -1}, {-1, -1}};
  for (int64_t i = 0; i < layers; ++i) {
    const bool m = moe[static_cast<size_t>(i)], r = rope[static_cast<size_t>(i)];
    int& block = block_of[m][r];
    if (block < 0) {
      block = static_cast<int>(g.blocks.size());
      g.blocks.push_back(multimodal::PreNormBlock(
          std::string("Llama 4 ") + (m ? "MoE" : "dense") + " block, " +
              (r ? "chunked RoPE attention" : "global NoPE attention"),
          "model.layers.{i}.", d.hidden, Attention(d, use_qk_norm && r), FeedForward(d, m)));
    }
    g.layers.push_back(LayerSpec{block, r ? chunk : 0});
  }
}

void BuildLlama4(ConfigReader& config, ModelGraph& g) {
  g.family =
      "Llama 4: ViT with pixel-shuffle adapter, linear projector, early-fusion MoE "
      "decoder (chunked RoPE / global NoPE attention)";
  multimodal::BuildComposite(config, g,
                             {.vision_type = "llama4_vision_model",
                              .text_type = "llama4_text",
                              .tower_label = "Llama 4 ViT",
                              .projector_module = "multi_modal_projector",
                              .projector_tensor = "linear_1"});
}

}  // namespace

void RegisterLlama4(ArchRegistry& registry) {
  registry.Add("llama4_text", BuildLlama4Text);
  registry.Add("llama4", BuildLlama4);
}

}  // namespace hubwatch
