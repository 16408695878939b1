#pragma once

// Parts the vision-language builders of Qwen-VL, Llama 4 and Mllama (arch_qwen_vl.cc,
// arch_llama4*.cc, arch_mllama*.cc, implemented in arch_vl_composite.cc) share: reading a sub-config, building the language model through the registry
// (BuildPart) and appending it as a section, and the attention of a vision tower, which caches
// nothing. Internal to the estimator.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch::multimodal {

// config[key] when it is an object; otherwise fails the read ("<key> must be an object") and
// returns null.
const nlohmann::json* SubConfig(ConfigReader& config, std::string_view key);

// Builds `part` through the registry as `model_type` (whatever model_type it names: a
// composite's text_config names the composite's own text type, e.g. "qwen2_vl_text", which is
// the plain decoder `model_type` builds), prefixes its modules with `prefix` ("" keeps them),
// appends it to g as the section "language model" and takes from it what the composite is
// seen as: vocab, hidden, tied, max_positions, vocab_logits, decodes. Fails the read on error.
void AppendLanguageModel(ConfigReader& config, ModelGraph& g, const nlohmann::json& part,
                         std::string_view part_name, std::string_view model_type,
                         const std::string& prefix);

// Forwards a sub-config reader's first error and its notes to `config`, prefixed by part_name.
void Forward(ConfigReader& part, ConfigReader& config, std::string_view part_name);

// A vision tower's graph fields: its family, width and tokens per image (tile); it neither
// decodes nor computes vocabulary logits.
void MarkTower(ModelGraph& g, std::string family, int64_t width, int64_t tokens);

// The Llama-style widths the text models of Llama 4 and Mllama read from their config.
struct DecoderDims {
  int64_t vocab, hidden, layers, heads, kv_heads, head_dim, intermediate;
  std::string activation;
};
DecoderDims ReadDecoderDims(ConfigReader& config, std::optional<int64_t> default_head_dim);
// A decoder attention node with "<prefix>q_proj" ... "<prefix>o_proj" of d's widths, bias-free;
// qk_norm: q and k normalised per head (the caller adds any norm weights).
Node DecoderAttention(const std::string& module, const std::string& prefix, const DecoderDims& d,
                      KvCaching caching, bool qk_norm);
// A Llama-style decoder's graph without its layers: family, vocab, hidden, tie_word_embeddings
// (default false), model.embed_tokens of vocab + extra_rows rows, model.norm and lm_head.
void DecoderShell(ConfigReader& config, ModelGraph& g, const DecoderDims& d, std::string family,
                  int64_t extra_rows);
// Adds "<prefix>gate_proj", up_proj, down_proj of hidden -> inter, bias-free.
void AddSwiGlu(Node& n, const std::string& prefix, int64_t hidden, int64_t inter);
// A pre-norm decoder block: <layer>input_layernorm, attention, <layer>post_attention_layernorm,
// feed-forward (RMSNorms of width hidden).
BlockTemplate PreNormBlock(std::string label, const std::string& layer, int64_t hidden,
                           Node attention, Node feed_forward);

// A vision encoder's self-attention over all patches at once: MHA, no KV cache (kNone), no
// tensors yet (the caller adds its projections under their checkpoint names).
Node VisionAttention(const std::string& module, int64_t width, int64_t heads, int64_t head_dim);
// The same with "<prefix>q_proj", k_proj, v_proj, o_proj of [width, width] (CLIP-style names).
Node VisionQkvoAttention(const std::string& module, const std::string& prefix, int64_t width,
                         int64_t heads, bool bias);
// A two-layer MLP "<prefix>fc1" [inter, width], "<prefix>fc2" [width, inter], biased.
Node VisionFcMlp(const std::string& module, const std::string& prefix, int64_t width, int64_t inter,
                 const std::string& activation);

// The vision-tower / linear-projector / language-model composite of Llama 4 and Mllama: the
// vision_config part built through the registry under vision_prefix, then a projector
// (module.<tensor> [text hidden, vision_output_dim]) and the text_config part under
// "language_model.", each a section. Returns the tower's max_positions (its tokens per image
// tile), or 0 after failing the read.
struct Composite {
  std::string vision_type, text_type, tower_label;
  std::string projector_module, projector_tensor;
  bool projector_bias = false;
};
int64_t BuildComposite(ConfigReader& config, ModelGraph& g, const Composite& c);

}  // namespace hubwatch::multimodal
