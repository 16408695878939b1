// The second table of Llama-family rows (llama_family.h), built by the same BuildFamily as
// arch_llama.cc's: glm, glm4, glm4_moe, exaone4, olmo3, hunyuan_v1_dense, phimoe, ernie4_5_moe and
// gpt_oss. Only glm4_moe adds something after the family build: the multi-token-prediction
// layers its checkpoints store and transformers does not load.

#include <string>
#include <utility>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/llama_family.h"

namespace hubwatch {
namespace llama {
namespace {

using namespace build;  // NOLINT: internal helpers

constexpr int64_t kGlmHeadDim = 128;
constexpr int64_t kErnieHeadDim = 128;
constexpr int64_t kGptOssHeadDim = 64;

const LlamaFamily kMoreFamilies[] = {
    {.model_type = "glm",
     .family = "GLM decoder (GlmForCausalLM): Llama layout with q/k/v biases, one fused "
               "gate_up_proj, partial RoPE",
     .bias = BiasRule::kQkvByAttentionBias,
     .head_dim_default = kGlmHeadDim,
     .fused_gate_up = true},
    {.model_type = "glm4",
     .family = "GLM-4-0414 decoder: GLM layout plus a norm after attention and after the MLP "
               "(4 RMSNorms per block)",
     .norms = NormLayout::kGlm4,
     .bias = BiasRule::kQkvByAttentionBias,
     .head_dim_default = kGlmHeadDim,
     .fused_gate_up = true},
    {.model_type = "glm4_moe",
     .family = "GLM-4.5 MoE decoder: q/k/v biases, dense first layers then 1 shared + routed "
               "SwiGLU experts (sigmoid router with score-correction bias)",
     .qk_norm = QkNorm::kPerHeadWhenFlag,
     .bias = BiasRule::kQkvByAttentionBias,
     .head_dim_default = kGlmHeadDim,
     .moe = Moe::kGlm4Moe},
    {.model_type = "exaone4",
     .family = "EXAONE-4.0 decoder: RMSNorm after each sublayer, per-head q/k RMSNorm, SwiGLU "
               "MLP, local/global attention by sliding_window_pattern",
     .norms = NormLayout::kPost,
     .qk_norm = QkNorm::kPerHead,
     .sliding = Sliding::kExaone},
    {.model_type = "olmo3",
     .family = "OLMo-3 decoder: OLMo-2 layout (post-norms, full-width q/k RMSNorm), 3 sliding : 1 "
               "full attention",
     .norms = NormLayout::kPost,
     .qk_norm = QkNorm::kFullWidth,
     .sliding = Sliding::kPattern,
     .sliding_pattern_default = 4,
     .sliding_window_default = 4096},
    {.model_type = "hunyuan_v1_dense",
     .family = "Hunyuan dense decoder: Llama layout with per-head query/key RMSNorm, bias-free MLP",
     .qk_norm = QkNorm::kQueryKeyLayernorm,
     .bias = BiasRule::kAttentionOnly},
    {.model_type = "phimoe",
     .family = "Phi-3.5-MoE decoder: LayerNorm with bias, biased attention, Mixtral-style "
               "sparse SwiGLU experts, biased LM head",
     .norm_kind = NormKind::kLayer,
     .norm_bias = true,
     .bias = BiasRule::kAttentionOnly,
     .sliding = Sliding::kAllLayers,
     .moe = Moe::kMixtral,
     .head_bias_flag = true},
    {.model_type = "ernie4_5_moe",
     .family = "ERNIE-4.5-MoE decoder: ERNIE-4.5 attention, dense first layer then routed + "
               "shared SwiGLU experts, tied embeddings",
     .bias = BiasRule::kUseBias,
     .tie_default = true,
     .use_bias_default = false,
     .head_dim_default = kErnieHeadDim,
     .moe = Moe::kErnie45Moe},
    {.model_type = "gpt_oss",
     .family = "gpt-oss decoder: biased GQA attention with per-head sinks, alternating sliding / "
               "full attention, routed SwiGLU experts fused per layer (MXFP4 on disk)",
     .bias = BiasRule::kAttentionOnly,
     .head_dim_default = kGptOssHeadDim,
     .sliding = Sliding::kAlternate,
     .sliding_window_default = 128,
     .moe = Moe::kGptOss,
     .attention_sinks = true,
     .dtype_default = "BF16"},
};

// Glm4MoeMTP: num_nextn_predict_layers layers after the last decoder layer, each a copy of the
// MoE decoder block plus enorm, hnorm, eh_proj [hidden, 2 * hidden], shared_head.norm and its own
// copies of the embedding and head. Glm4MoeForCausalLM skips them on load: on disk only.
void AppendMtpLayers(ConfigReader& config, ModelGraph& g) {
  const int64_t mtp = config.NonNegative({"num_nextn_predict_layers"}, 16, 0);
  if (mtp == 0 || !config.ok() || g.blocks.empty()) return;
  const int64_t first = static_cast<int64_t>(g.layers.size());
  for (int64_t k = 0; k < mtp; ++k) {
    const std::string index = std::to_string(first + k);
    std::vector<Node> nodes = g.blocks[0].nodes;  // the MoE block
    Node extra;
    extra.kind = NodeKind::kNorm;
    extra.module = "model.layers.{i}";
    extra.label = "multi-token prediction layer " + index;
    AddTensor(extra, "enorm.weight", {g.hidden});
    AddTensor(extra, "hnorm.weight", {g.hidden});
    AddLinear(extra, "eh_proj", 2 * g.hidden, g.hidden, false);
    AddTensor(extra, "shared_head.norm.weight", {g.hidden});
    AddTensor(extra, "shared_head.head.weight", {g.vocab, g.hidden});
    AddTensor(extra, "embed_tokens.weight", {g.vocab, g.hidden});
    nodes.push_back(std::move(extra));
    for (Node& node : nodes) {
      node.module.replace(node.module.find("{i}"), 3, index);
      for (TensorSpec& t : node.tensors) t.role = TensorRole::kExtraOnDisk;
      g.extra_nodes.push_back(std::move(node));
    }
  }
  g.notes.push_back(std::to_string(mtp) +
                    " multi-token-prediction layer(s) stored after the decoder layers are not "
                    "loaded by transformers: counted on disk, not in params");
}

}  // namespace
}  // namespace llama

void RegisterLlamaFamilyMore(ArchRegistry& registry) {
  for (const llama::LlamaFamily& f : llama::kMoreFamilies) {
    registry.Add(f.model_type, [&f](ConfigReader& config, ModelGraph& graph) {
      llama::BuildFamily(f, config, graph);
      if (f.moe == llama::Moe::kGlm4Moe) llama::AppendMtpLayers(config, graph);
    });
  }
}

}  // namespace hubwatch
