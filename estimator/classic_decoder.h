#pragma once

// Decoder: what the config.json of one classic GPT-style decoder (opt, bloom, gptj, gpt_bigcode,
// mpt, stablelm) says, in the terms Assemble (arch_classic.cc) builds a graph from, and the
// per-family readers (arch_classic_readers.cc) that produce it from the keys, aliases and
// defaults of each family's config class. A reader reports problems through config.Fail /
// config.Note. Internal to the estimator.

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch::classic {

enum class BlockLayout {
  kPreNorm,   // norm1, attention, norm2, MLP
  kPostNorm,  // attention, norm1, MLP, norm2 (OPT-350m: do_layer_norm_before false)
  kParallel,  // norm1, then attention and MLP both on its output (gptj; stablelm's option)
};

// What a family's config.json says, read by the family's reader.
struct Decoder {
  std::string family;  // ModelGraph::family
  int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t inner = 0;          // MLP width
  int64_t embed_width = 0;    // the token embedding's and the head's width (OPT); 0: hidden
  int64_t position_rows = 0;  // rows of the learned position table; 0: none
  int64_t max_positions = 0;  // 0: left to the generic max_position_embeddings read
  std::string activation;
  bool gated = false;  // act(gate_proj(x)) * up_proj(x)
  bool qkv_bias = true, out_bias = true, mlp_bias = true;
  NormKind norm_kind = NormKind::kLayer;
  bool norm_bias = true;
  bool embed_norm = false;
  bool final_norm = true;
  BlockLayout layout = BlockLayout::kPreNorm;
  bool tied = false;
  bool loss_in_fp32 = true;  // ModelGraph::loss_in_fp32
  bool head_bias = false;
  std::string attention_label;  // appended to the attention node's label (", ALiBi")
  int64_t qk_norm_width = 0;
  std::vector<TensorSpec> attention_extra;  // per layer, under the attention module
};

Decoder ReadOpt(ConfigReader& config);         // opt: OPTForCausalLM
Decoder ReadBloom(ConfigReader& config);       // bloom: BloomForCausalLM
Decoder ReadGptj(ConfigReader& config);        // gptj: GPTJForCausalLM
Decoder ReadGptBigcode(ConfigReader& config);  // gpt_bigcode: GPTBigCodeForCausalLM
Decoder ReadMpt(ConfigReader& config);         // mpt: mosaicml's MPTForCausalLM
Decoder ReadStablelm(ConfigReader& config);    // stablelm: StableLmForCausalLM

}  // namespace hubwatch::classic
