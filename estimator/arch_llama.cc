// The Llama-style decoder family: separate q/k/v/o projections, a gate/up/down (or c_fc/c_proj)
// MLP or a mixture of experts, norms around both (or one norm before both, in parallel). Covers
// llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3_text, olmo,
// olmo2, olmoe, starcoder2, granite, granitemoe, smollm3, ernie4_5, cohere and cohere2, which
// differ only in the switches of their LlamaFamily row (llama_family.h) in kFamilies below.
// BuildFamily also builds the rows of arch_llama_more.cc (glm, glm4, glm4_moe, exaone4, olmo3,
// hunyuan_v1_dense, phimoe, ernie4_5_moe, gpt_oss). The mixture-of-experts nodes are built in
// arch_llama_moe.cc (llama_moe.h), the sliding-window layers in arch_llama_sliding.cc.

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/llama_family.h"
#include "estimator/llama_moe.h"

namespace hubwatch {
namespace llama {
namespace {

using namespace build;  // NOLINT: internal helpers

constexpr int64_t kGemmaHeadDim = 256;
constexpr int64_t kQwen3HeadDim = 128;
constexpr int64_t kErnieHeadDim = 128;

const LlamaFamily kFamilies[] = {
    {.model_type = "llama", .family = "Llama decoder: RMSNorm pre-norm, SwiGLU MLP, RoPE"},
    {.model_type = "mistral",
     .family = "Mistral decoder: Llama layout with sliding-window attention",
     .sliding = Sliding::kAllLayers},
    {.model_type = "mixtral",
     .family = "Mixtral decoder: Mistral attention, sparse mixture of SwiGLU experts",
     .sliding = Sliding::kAllLayers,
     .moe = Moe::kMixtral},
    {.model_type = "qwen2",
     .family = "Qwen2 decoder: Llama layout with q/k/v biases",
     .bias = BiasRule::kQkvOnly,
     .sliding = Sliding::kQwen},
    {.model_type = "qwen2_moe",
     .family = "Qwen2-MoE decoder: q/k/v biases, routed experts plus a gated shared expert",
     .bias = BiasRule::kQkvOnly,
     .sliding = Sliding::kQwen,
     .moe = Moe::kQwen2Moe},
    {.model_type = "qwen3",
     .family = "Qwen3 decoder: Llama layout with per-head q/k RMSNorm",
     .qk_norm = QkNorm::kPerHead,
     .head_dim_default = kQwen3HeadDim,
     .sliding = Sliding::kQwen},
    {.model_type = "gemma",
     .family = "Gemma decoder: RMSNorm pre-norm, GeGLU MLP, tied embeddings",
     .tie_default = true,
     .activation_default = "gelu_pytorch_tanh",
     .head_dim_default = kGemmaHeadDim},
    {.model_type = "gemma2",
     .family = "Gemma-2 decoder: 4 RMSNorms per block, GeGLU MLP, local/global attention "
               "alternating, tied embeddings",
     .norms = NormLayout::kSandwich,
     .tie_default = true,
     .activation_default = "gelu_pytorch_tanh",
     .head_dim_default = kGemmaHeadDim,
     .sliding = Sliding::kAlternate},
    {.model_type = "gemma3_text",
     .family = "Gemma-3 decoder: 4 RMSNorms per block, q/k norm, GeGLU MLP, 5 local : 1 global "
               "attention, tied embeddings",
     .norms = NormLayout::kSandwich,
     .qk_norm = QkNorm::kPerHead,
     .tie_default = true,
     .activation_default = "gelu_pytorch_tanh",
     .head_dim_default = kGemmaHeadDim,
     .sliding = Sliding::kPattern},
    {.model_type = "olmo",
     .family = "OLMo decoder: non-parametric LayerNorm, SwiGLU MLP",
     .norm_kind = NormKind::kLayerNoAffine},
    {.model_type = "olmo2",
     .family = "OLMo-2 decoder: RMSNorm after each sublayer, full-width q/k RMSNorm, SwiGLU MLP",
     .norms = NormLayout::kPost,
     .qk_norm = QkNorm::kFullWidth},
    {.model_type = "starcoder2",
     .family = "StarCoder2 decoder: LayerNorm with bias, biased linears, GELU MLP, sliding window",
     .norm_kind = NormKind::kLayer,
     .norm_bias = true,
     .bias = BiasRule::kUseBias,
     .gated = false,
     .tie_default = true,
     .activation_default = "gelu_pytorch_tanh",
     .sliding = Sliding::kAllLayers},
    {.model_type = "qwen3_moe",
     .family = "Qwen3-MoE decoder: per-head q/k RMSNorm, routed SwiGLU experts, no shared expert",
     .qk_norm = QkNorm::kPerHead,
     .bias = BiasRule::kAttentionOnly,
     .sliding = Sliding::kQwen,
     .moe = Moe::kQwen3Moe},
    {.model_type = "olmoe",
     .family = "OLMoE decoder: full-width q/k RMSNorm, routed SwiGLU experts, no shared expert",
     .qk_norm = QkNorm::kFullWidth,
     .bias = BiasRule::kAttentionOnly,
     .moe = Moe::kOlmoe},
    {.model_type = "granite",
     .family = "Granite decoder: Llama layout; its embedding, attention, residual and logit "
               "multipliers hold no parameters"},
    {.model_type = "granitemoe",
     .family = "Granite-MoE decoder: Granite attention, a linear router and SwiGLU experts fused "
               "into one input_linear and one output_linear tensor per layer",
     .bias = BiasRule::kAttentionOnly,
     .moe = Moe::kGraniteMoe},
    {.model_type = "smollm3",
     .family = "SmolLM3 decoder: Llama layout, every no_rope_layer_interval-th layer without "
               "RoPE (NoPE), tied embeddings",
     .tie_default = true,
     .sliding = Sliding::kNoRope},
    {.model_type = "ernie4_5",
     .family = "ERNIE-4.5 decoder: Llama layout, use_bias on every linear, heads * head_dim "
               "independent of hidden_size, tied embeddings",
     .bias = BiasRule::kUseBias,
     .tie_default = true,
     .use_bias_default = false,
     .head_dim_default = kErnieHeadDim},
    {.model_type = "cohere",
     .family = "Cohere decoder: one bias-free LayerNorm before parallel attention and SwiGLU MLP, "
               "tied embeddings, scaled logits",
     .norms = NormLayout::kParallel,
     .norm_kind = NormKind::kLayer,
     .qk_norm = QkNorm::kPerHeadWhenUseQkNorm,
     .bias = BiasRule::kAttentionOnly,
     .tie_default = true},
    {.model_type = "cohere2",
     .family = "Cohere2 decoder: one bias-free LayerNorm before parallel attention and SwiGLU "
               "MLP, 3 sliding : 1 global attention (global layers without RoPE), tied embeddings",
     .norms = NormLayout::kParallel,
     .norm_kind = NormKind::kLayer,
     .bias = BiasRule::kAttentionOnly,
     .tie_default = true,
     .sliding = Sliding::kPattern,
     .sliding_pattern_default = 4,
     .sliding_window_default = 4096},
};

Node AttentionFor(const LlamaFamily& f, ConfigReader& config, const Dims& d) {
  AttentionShape shape;
  shape.kind = KindFromHeads(d.heads, d.kv_heads);
  shape.heads = d.heads;
  shape.kv_heads = d.kv_heads;
  shape.head_dim = shape.v_head_dim = d.head_dim;
  QkNorm qk_norm = f.qk_norm;
  const bool needs_flag =
      qk_norm == QkNorm::kPerHeadWhenUseQkNorm || qk_norm == QkNorm::kPerHeadWhenFlag;
  if (needs_flag && !config.Flag({"use_qk_norm"}, false)) qk_norm = QkNorm::kNone;
  if (qk_norm != QkNorm::kNone) shape.qk_norm_width = (d.heads + d.kv_heads) * d.head_dim;
  shape.logit_softcap = config.Has({"attn_logit_softcapping"});
  Node n = AttentionNode("model.layers.{i}.self_attn", shape);
  n.output_width = d.hidden;
  AddLinear(n, "q_proj", d.hidden, d.heads * d.head_dim, d.qkv_bias);
  AddLinear(n, "k_proj", d.hidden, d.kv_heads * d.head_dim, d.qkv_bias);
  AddLinear(n, "v_proj", d.hidden, d.kv_heads * d.head_dim, d.qkv_bias);
  AddLinear(n, "o_proj", d.heads * d.head_dim, d.hidden, d.o_bias);
  switch (qk_norm) {
    case QkNorm::kNone:
      break;
    case QkNorm::kPerHead:
    case QkNorm::kPerHeadWhenFlag:
      AddTensor(n, "q_norm.weight", {d.head_dim});
      AddTensor(n, "k_norm.weight", {d.head_dim});
      break;
    case QkNorm::kFullWidth:
      AddTensor(n, "q_norm.weight", {d.heads * d.head_dim});
      AddTensor(n, "k_norm.weight", {d.kv_heads * d.head_dim});
      break;
    case QkNorm::kPerHeadWhenUseQkNorm:
      AddTensor(n, "q_norm.weight", {d.heads, d.head_dim});
      AddTensor(n, "k_norm.weight", {d.kv_heads, d.head_dim});
      break;
    case QkNorm::kQueryKeyLayernorm:
      AddTensor(n, "query_layernorm.weight", {d.head_dim});
      AddTensor(n, "key_layernorm.weight", {d.head_dim});
      break;
  }
  if (f.attention_sinks) AddTensor(n, "sinks", {d.heads});
  // Conversions from the original Llama weights stored the rotary frequencies; most don't.
  TensorSpec& inv_freq = AddTensor(n, "rotary_emb.inv_freq", {d.head_dim / 2}, TensorRole::kBuffer);
  inv_freq.stored = false;
  return n;
}

Node DenseMlp(const LlamaFamily& f, const Dims& d, const std::string& module,
              int64_t intermediate) {
  Node n = MlpNode(module, d.hidden, {intermediate, f.gated, d.activation});
  if (f.fused_gate_up) {
    AddLinear(n, "gate_up_proj", d.hidden, 2 * intermediate, d.mlp_bias);
    AddLinear(n, "down_proj", intermediate, d.hidden, d.mlp_bias);
  } else if (f.gated) {
    AddLinear(n, "gate_proj", d.hidden, intermediate, d.mlp_bias);
    AddLinear(n, "up_proj", d.hidden, intermediate, d.mlp_bias);
    AddLinear(n, "down_proj", intermediate, d.hidden, d.mlp_bias);
  } else {
    AddLinear(n, "c_fc", d.hidden, intermediate, d.mlp_bias);
    AddLinear(n, "c_proj", intermediate, d.hidden, d.mlp_bias);
  }
  return n;
}

BlockTemplate Block(const LlamaFamily& f, const Dims& d, Node attention, Node mlp) {
  auto norm = [&](const char* name) {
    return Norm(std::string("model.layers.{i}.") + name, d.hidden, f.norm_kind, f.norm_bias);
  };
  BlockTemplate b;
  b.label = std::string(f.model_type) + " decoder block";
  switch (f.norms) {
    case NormLayout::kPre:
      b.nodes = NodeList(norm("input_layernorm"), std::move(attention),
                         norm("post_attention_layernorm"), std::move(mlp));
      break;
    case NormLayout::kSandwich:
      b.nodes = NodeList(norm("input_layernorm"), std::move(attention),
                         norm("post_attention_layernorm"), norm("pre_feedforward_layernorm"),
                         std::move(mlp), norm("post_feedforward_layernorm"));
      break;
    case NormLayout::kPost:
      b.nodes = NodeList(std::move(attention), norm("post_attention_layernorm"), std::move(mlp),
                         norm("post_feedforward_layernorm"));
      break;
    case NormLayout::kParallel:
      mlp.saves_input = false;  // reads the same norm output as attention
      b.nodes = NodeList(norm("input_layernorm"), std::move(attention), std::move(mlp));
      break;
    case NormLayout::kGlm4:
      b.nodes =
          NodeList(norm("input_layernorm"), std::move(attention), norm("post_self_attn_layernorm"),
                   norm("post_attention_layernorm"), std::move(mlp), norm("post_mlp_layernorm"));
      break;
  }
  return b;
}

}  // namespace

void BuildFamily(const LlamaFamily& f, ConfigReader& config, ModelGraph& g) {
  Dims d{};
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  d.heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  d.kv_heads = config.Positive({"num_key_value_heads"}, kMaxHeads, d.heads,
                               "num_key_value_heads absent: one KV head per query head (MHA)");
  d.head_dim = ReadHeadDim(config, d.hidden, d.heads, f.head_dim_default);
  d.intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  d.activation = config.String({"hidden_activation", "hidden_act"}, f.activation_default);
  switch (f.bias) {
    case BiasRule::kAttentionBias:
      d.qkv_bias = d.o_bias = config.Flag({"attention_bias"}, false);
      d.mlp_bias = config.Flag({"mlp_bias"}, false);
      break;
    case BiasRule::kQkvOnly:
      d.qkv_bias = true;
      break;
    case BiasRule::kUseBias:
      d.qkv_bias = d.o_bias = d.mlp_bias = config.Flag({"use_bias"}, f.use_bias_default);
      break;
    case BiasRule::kAttentionOnly:
      d.qkv_bias = d.o_bias = config.Flag({"attention_bias"}, false);
      break;
    case BiasRule::kQkvByAttentionBias:
      d.qkv_bias = config.Flag({"attention_bias"}, false);
      break;
  }
  g.family = f.family;
  if (!f.dtype_default.empty() && !config.Find({"torch_dtype", "dtype"})) {
    g.dtype = f.dtype_default;
    config.Note("torch_dtype absent: " + std::string(f.dtype_default) +
                ", what this architecture's released checkpoints store");
  }
  g.vocab = d.vocab;
  g.hidden = d.hidden;
  g.base_prefix = "model.";
  g.tied =
      config.Flag({"tie_word_embeddings"}, f.tie_default,
                  f.tie_default ? "tie_word_embeddings absent: tied (the architecture's default)"
                                : "tie_word_embeddings absent: untied (the default)");

  g.embeddings.push_back(Embedding("model.embed_tokens", d.vocab, d.hidden, "token embedding"));
  Node attention = AttentionFor(f, config, d);
  UniformLayers(g, d.layers);
  if (f.moe == Moe::kNone) {
    g.blocks.push_back(
        Block(f, d, std::move(attention), DenseMlp(f, d, "model.layers.{i}.mlp", d.intermediate)));
  } else {
    Node moe = MoeFor(f, config, d);
    g.blocks.push_back(Block(f, d, attention, std::move(moe)));
    const std::vector<bool> sparse = SparseLayers(f, config, d.layers);
    for (size_t i = 0; i < sparse.size(); ++i) {
      if (sparse[i]) continue;
      if (g.blocks.size() == 1) {
        g.blocks.push_back(
            Block(f, d, attention, DenseMlp(f, d, "model.layers.{i}.mlp", d.intermediate)));
      }
      g.layers[i].block = 1;
    }
  }
  ApplySliding(f, config, g);
  g.final_nodes.push_back(Norm("model.norm", d.hidden, f.norm_kind, f.norm_bias));
  const bool head_bias = f.head_bias_flag && config.Flag({"lm_head_bias"}, false);
  g.final_nodes.push_back(Head("lm_head", d.vocab, d.hidden, g.tied, head_bias, false));
}

}  // namespace llama

void RegisterLlamaFamily(ArchRegistry& registry) {
  for (const llama::LlamaFamily& f : llama::kFamilies) {
    registry.Add(f.model_type, [&f](ConfigReader& config, ModelGraph& graph) {
      llama::BuildFamily(f, config, graph);
    });
  }
}

}  // namespace hubwatch
