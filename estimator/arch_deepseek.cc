// DeepSeek-V2 and V3: multi-head latent attention (MLA), the first first_k_dense_replace layers
// dense, the rest a mixture of routed and shared experts. V3 adds the router's score-correction
// bias and, stored in the checkpoint but not loaded by transformers, num_nextn_predict_layers
// multi-token-prediction layers after the last decoder layer.

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

struct DeepseekDims {
  int64_t vocab, hidden, layers, heads;
  std::optional<int64_t> q_lora_rank;
  int64_t kv_lora_rank, nope, rope, v_head_dim, intermediate;
  std::optional<int64_t> experts;
  int64_t shared, top_k, moe_intermediate, first_dense, moe_freq;
  bool attention_bias, score_correction_bias;
  std::string activation;
};

Node Mla(const DeepseekDims& d, const std::string& module) {
  AttentionShape shape;
  shape.kind = AttentionKind::kMla;
  shape.heads = d.heads;
  shape.kv_heads = d.heads;
  shape.head_dim = d.nope + d.rope;
  shape.v_head_dim = d.v_head_dim;
  shape.q_lora_rank = d.q_lora_rank.value_or(0);
  shape.kv_lora_rank = d.kv_lora_rank;
  shape.rope_head_dim = d.rope;
  Node n = AttentionNode(module, shape);
  n.output_width = d.hidden;
  const int64_t q_out = d.heads * (d.nope + d.rope);
  if (d.q_lora_rank) {
    AddLinear(n, "q_a_proj", d.hidden, *d.q_lora_rank, d.attention_bias);
    AddTensor(n, "q_a_layernorm.weight", {*d.q_lora_rank});
    AddLinear(n, "q_b_proj", *d.q_lora_rank, q_out, false);
  } else {
    AddLinear(n, "q_proj", d.hidden, q_out, false);
  }
  AddLinear(n, "kv_a_proj_with_mqa", d.hidden, d.kv_lora_rank + d.rope, d.attention_bias);
  AddTensor(n, "kv_a_layernorm.weight", {d.kv_lora_rank});
  AddLinear(n, "kv_b_proj", d.kv_lora_rank, d.heads * (d.nope + d.v_head_dim), false);
  AddLinear(n, "o_proj", d.heads * d.v_head_dim, d.hidden, d.attention_bias);
  return n;
}

void AddGatedMlp(Node& n, const std::string& prefix, int64_t hidden, int64_t inter) {
  AddLinear(n, prefix + "gate_proj", hidden, inter, false);
  AddLinear(n, prefix + "up_proj", hidden, inter, false);
  AddLinear(n, prefix + "down_proj", inter, hidden, false);
}

Node Moe(const DeepseekDims& d, const std::string& module) {
  Node n;
  n.kind = NodeKind::kMoe;
  n.module = module;
  n.output_width = d.hidden;
  n.moe = {*d.experts, d.top_k,     d.moe_intermediate, d.moe_intermediate * d.shared,
           true,       d.activation};
  n.label = "MoE: " + std::to_string(*d.experts) + " routed experts, top-" +
            std::to_string(d.top_k) + ", " + std::to_string(d.shared) + " shared, SwiGLU " +
            std::to_string(d.moe_intermediate) + " each";
  // The router is a bare parameter [experts, hidden], not a Linear.
  AddTensor(n, "gate.weight", {*d.experts, d.hidden});
  if (d.score_correction_bias) {
    // A parameter in DeepSeek's own modeling code (and counted in its published 671B); fp32.
    AddTensor(n, "gate.e_score_correction_bias", {*d.experts}).dtype = "F32";
  }
  for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) {
    const bool down = std::string_view(proj) == "down_proj";
    const int64_t in = down ? d.moe_intermediate : d.hidden;
    const int64_t out = down ? d.hidden : d.moe_intermediate;
    TensorSpec& t = AddTensor(n, std::string("experts.{e}.") + proj + ".weight", {out, in});
    t.linear_in = in;
    t.linear_out = out;
    t.copies = *d.experts;
    t.routed = true;
  }
  if (d.shared) AddGatedMlp(n, "shared_experts.", d.hidden, d.moe_intermediate * d.shared);
  return n;
}

BlockTemplate Block(const DeepseekDims& d, const std::string& prefix, bool moe) {
  Node mlp;
  if (moe) {
    mlp = Moe(d, prefix + "mlp");
  } else {
    mlp = MlpNode(prefix + "mlp", d.hidden, {d.intermediate, true, d.activation});
    AddGatedMlp(mlp, "", d.hidden, d.intermediate);
  }
  return {moe ? "MoE decoder block" : "dense decoder block",
          NodeList(Norm(prefix + "input_layernorm", d.hidden, NormKind::kRms, false),
                   Mla(d, prefix + "self_attn"),
                   Norm(prefix + "post_attention_layernorm", d.hidden, NormKind::kRms, false),
                   std::move(mlp))};
}

void BuildDeepseek(ConfigReader& config, ModelGraph& g, bool v3) {
  DeepseekDims d{};
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  d.heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  d.q_lora_rank = config.OptionalPositive({"q_lora_rank"}, kMaxWidth);
  d.kv_lora_rank = config.Positive({"kv_lora_rank"}, kMaxWidth);
  d.nope = config.Positive({"qk_nope_head_dim"}, kMaxWidth);
  d.rope = config.Positive({"qk_rope_head_dim"}, kMaxWidth);
  d.v_head_dim = config.Positive({"v_head_dim"}, kMaxWidth);
  d.intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  d.experts = config.OptionalPositive({"n_routed_experts"}, kMaxExperts);
  d.shared = config.NonNegative({"n_shared_experts"}, kMaxExperts, 0);
  d.top_k = config.Positive({"num_experts_per_tok"}, kMaxExperts, 1);
  if (d.experts) CheckTopK(config, d.top_k, *d.experts);
  d.moe_intermediate = config.Positive({"moe_intermediate_size"}, kMaxWidth, d.intermediate);
  d.first_dense = config.NonNegative({"first_k_dense_replace"}, kMaxLayers, 0);
  d.moe_freq = config.Positive({"moe_layer_freq"}, kMaxLayers, 1);
  d.attention_bias = config.Flag({"attention_bias"}, false);
  d.activation = config.String({"hidden_act"}, "silu");
  d.score_correction_bias =
      config.String({"topk_method"}, v3 ? "noaux_tc" : "greedy") == "noaux_tc";
  const int64_t mtp = v3 ? config.NonNegative({"num_nextn_predict_layers"}, 16, 0) : 0;

  g.family = std::string(v3 ? "DeepSeek-V3" : "DeepSeek-V2") +
             " decoder: multi-head latent attention, dense first layers then routed + shared "
             "SwiGLU experts";
  g.vocab = d.vocab;
  g.hidden = d.hidden;
  g.base_prefix = "model.";
  g.tied = config.Flag({"tie_word_embeddings"}, false);
  g.embeddings.push_back(Embedding("model.embed_tokens", d.vocab, d.hidden, "token embedding"));

  auto is_moe = [&](int64_t i) { return d.experts && i >= d.first_dense && i % d.moe_freq == 0; };
  UniformLayers(g, d.layers);
  int dense_block = -1, moe_block = -1;
  for (int64_t i = 0; i < d.layers; ++i) {
    int& index = is_moe(i) ? moe_block : dense_block;
    if (index < 0) {
      index = static_cast<int>(g.blocks.size());
      g.blocks.push_back(Block(d, "model.layers.{i}.", is_moe(i)));
    }
    g.layers[static_cast<size_t>(i)].block = index;
  }
  g.final_nodes.push_back(Norm("model.norm", d.hidden, NormKind::kRms, false));
  g.final_nodes.push_back(Head("lm_head", d.vocab, d.hidden, g.tied, false, false));

  // Multi-token prediction layers: a decoder block plus projections, stored after the last
  // decoder layer with their own copies of the embedding and head.
  for (int64_t k = 0; k < mtp; ++k) {
    const int64_t index = d.layers + k;
    const std::string prefix = "model.layers." + std::to_string(index) + ".";
    BlockTemplate block = Block(d, prefix, is_moe(index));
    Node extra;
    extra.kind = NodeKind::kNorm;
    extra.module = prefix.substr(0, prefix.size() - 1);
    extra.label = "multi-token prediction layer " + std::to_string(index);
    AddTensor(extra, "enorm.weight", {d.hidden});
    AddTensor(extra, "hnorm.weight", {d.hidden});
    AddLinear(extra, "eh_proj", 2 * d.hidden, d.hidden, false);
    AddTensor(extra, "shared_head.norm.weight", {d.hidden});
    AddTensor(extra, "shared_head.head.weight", {d.vocab, d.hidden});
    AddTensor(extra, "embed_tokens.weight", {d.vocab, d.hidden});
    block.nodes.push_back(std::move(extra));
    for (Node& node : block.nodes) {
      for (TensorSpec& t : node.tensors) t.role = TensorRole::kExtraOnDisk;
      g.extra_nodes.push_back(std::move(node));
    }
  }
  if (mtp) {
    g.notes.push_back(std::to_string(mtp) +
                      " multi-token-prediction layer(s) are stored in the checkpoint but not "
                      "loaded by transformers: counted on disk, not in params");
  }
}

}  // namespace

void RegisterDeepseek(ArchRegistry& registry) {
  registry.Add("deepseek_v2", [](ConfigReader& c, ModelGraph& g) { BuildDeepseek(c, g, false); });
  registry.Add("deepseek_v3", [](ConfigReader& c, ModelGraph& g) { BuildDeepseek(c, g, true); });
}

}  // namespace hubwatch
