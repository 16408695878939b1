#pragma once

// One row of the Llama-style decoder family (arch_llama.cc): the switches in which llama,
// mistral, qwen2, gemma ... differ, and Dims, the widths and biases BuildFamily reads from
// config.json once and hands to the builders of attention, MLP and mixture of experts.
// Internal to the estimator: shared by arch_llama.cc, arch_llama_more.cc (the second table of
// rows) and arch_llama_moe.cc.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch::llama {

enum class NormLayout {
  kPre,       // input_layernorm, post_attention_layernorm (before attention and MLP)
  kSandwich,  // gemma2/3: + pre_feedforward_layernorm, post_feedforward_layernorm (4 per block)
  kPost,      // olmo2: post_attention_layernorm, post_feedforward_layernorm after each sublayer
  kParallel,  // cohere: one input_layernorm whose output feeds attention and MLP side by side
  kGlm4,      // glm4: input_layernorm, post_self_attn_layernorm, post_attention_layernorm,
              // post_mlp_layernorm (pre-norms plus a norm on each sublayer's output)
};
enum class QkNorm {
  kNone,
  kPerHead,    // q_norm, k_norm [head_dim], shared by the heads
  kFullWidth,  // q_norm [heads * head_dim], k_norm [kv_heads * head_dim]
  // cohere: only with "use_qk_norm" (default false), LayerNorm weights [heads, head_dim] and
  // [kv_heads, head_dim], one row per head
  kPerHeadWhenUseQkNorm,
  kPerHeadWhenFlag,    // glm4_moe: q_norm, k_norm [head_dim] only with "use_qk_norm"
  kQueryKeyLayernorm,  // hunyuan_v1_dense: query_layernorm, key_layernorm [head_dim], always
};
enum class BiasRule {
  kAttentionBias,  // "attention_bias" (default false) on q, k, v, o; "mlp_bias" on the MLP
  kQkvOnly,        // qwen2: q, k, v always biased, o never
  kUseBias,        // starcoder2, ernie4_5: "use_bias" (default: use_bias_default) on every linear
  kAttentionOnly,  // "attention_bias" (default false) on q, k, v, o; MLP and experts never biased
  kQkvByAttentionBias,  // glm, glm4, glm4_moe: "attention_bias" on q, k, v; o and MLP never
};
enum class Sliding {
  kNone,
  kAllLayers,  // mistral, mixtral, starcoder2: sliding_window on every layer when set
  kQwen,       // use_sliding_window: layers >= max_window_layers
  kAlternate,  // gemma2: even layers local
  kPattern,    // gemma3, cohere2: every sliding_window_pattern-th layer global
  kNoRope,     // smollm3: with use_sliding_window, the layers without RoPE (no_rope_layers 0)
  // exaone4: sliding_window_pattern an integer (as kPattern) or a string of L (local) and G
  // (global) repeated over the layers ("LLLG")
  kExaone,
};
enum class Moe {
  kNone,
  kMixtral,     // block_sparse_moe: gate, experts.{e}.w1/w2/w3
  kQwen2Moe,    // mlp: gate, experts.{e}.gate/up/down_proj, shared_expert, shared_expert_gate
  kQwen3Moe,    // mlp: gate, experts.{e}.gate/up/down_proj, no shared expert
  kOlmoe,       // mlp: gate, experts.{e}.gate/up/down_proj of intermediate_size
  kGraniteMoe,  // block_sparse_moe: router.layer, experts fused into input_linear/output_linear
  // mlp: router (weight + bias), experts.gate_up_proj [E, hidden, 2 * inter] + bias and
  // experts.down_proj [E, inter, hidden] + bias; MXFP4 blocks + scales in OpenAI's checkpoints
  kGptOss,
  // mlp: gate.weight (a bare parameter) + gate.e_score_correction_bias, experts.{e}.*_proj,
  // shared_experts; the first first_k_dense_replace layers dense
  kGlm4Moe,
  // mlp: gate, moe_statics.e_score_correction_bias [1, E], experts.{e}.*_proj, shared_experts;
  // sparse from moe_layer_start_index every moe_layer_interval-th layer
  kErnie45Moe,
};

struct LlamaFamily {
  std::string_view model_type = {};
  std::string_view family = {};
  NormLayout norms = NormLayout::kPre;
  NormKind norm_kind = NormKind::kRms;
  bool norm_bias = false;
  QkNorm qk_norm = QkNorm::kNone;
  BiasRule bias = BiasRule::kAttentionBias;
  bool gated = true;
  bool tie_default = false;
  const char* activation_default = "silu";
  bool use_bias_default = true;  // BiasRule::kUseBias when "use_bias" is absent
  std::optional<int64_t> head_dim_default = std::nullopt;
  Sliding sliding = Sliding::kNone;
  int64_t sliding_pattern_default = 6;  // Sliding::kPattern without "sliding_window_pattern"
  // The window when config.json has no "sliding_window" key at all (0: none); an explicit null
  // still means no sliding window.
  int64_t sliding_window_default = 0;
  Moe moe = Moe::kNone;
  bool fused_gate_up = false;    // glm, glm4: mlp.gate_up_proj [2 * inter, hidden], down_proj
  bool attention_sinks = false;  // gpt_oss: self_attn.sinks [heads], one learned logit a head
  bool head_bias_flag = false;   // phimoe: "lm_head_bias" (default false) biases lm_head
  // The dtype the released checkpoints store when config.json names none ("BF16" for gpt_oss,
  // whose configs have no torch_dtype); empty: transformers' float32 default.
  std::string_view dtype_default = {};
};

// What BuildFamily read from config.json, for the builders of one family's nodes.
struct Dims {
  int64_t vocab, hidden, layers, heads, kv_heads, head_dim, intermediate;
  bool qkv_bias, o_bias, mlp_bias;
  std::string activation;
};

// Builds the graph of one family row from config (arch_llama.cc); problems through config.Fail.
void BuildFamily(const LlamaFamily& f, ConfigReader& config, ModelGraph& g);

// Sets the window of every layer of g (arch_llama_sliding.cc): layer_types when the config has
// it, else f.sliding with the config's sliding_window.
void ApplySliding(const LlamaFamily& f, ConfigReader& config, ModelGraph& g);

}  // namespace hubwatch::llama
