// qwen3_next (Qwen3NextForCausalLM): Gated DeltaNet linear attention in three of every four
// layers, gated softmax attention (q_proj also emits a sigmoid output gate; q_norm/k_norm) in
// the fourth, every layer's MLP a Qwen2-MoE-style sparse block with a shared expert. The
// checkpoint also stores a multi-token-prediction block (mtp.*) that transformers does not load.

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/llama_moe.h"
#include "estimator/ssm_parts.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

constexpr llama::LlamaFamily kQwenMoe{.model_type = "qwen3_next", .moe = llama::Moe::kQwen2Moe};

struct NextDims {
  llama::Dims d;
  ssm::AttentionDims attn;
  ssm::DeltaNetDims delta;
};

// A decoder layer's nodes under `layer` ("model.layers.{i}." or "mtp.layers.0."): norms,
// attention or the delta net, then the MoE (or a dense MLP for mlp_only_layers).
std::vector<Node> LayerNodes(ConfigReader& config, const NextDims& n, const std::string& layer,
                             bool attention, bool sparse) {
  const int64_t hidden = n.d.hidden;
  Node mixer = attention ? ssm::HybridAttention(layer + "self_attn", n.attn, "o_proj", true,
                                                "q_norm", "k_norm")
                         : ssm::GatedDeltaNet(layer + "linear_attn", n.delta);
  Node mlp = sparse ? llama::MoeFor(kQwenMoe, config, n.d)
                    : ssm::GatedMlp(layer + "mlp", hidden, n.d.intermediate, n.d.activation,
                                    "gate_proj", "up_proj", "down_proj");
  mlp.module = layer + "mlp";
  return NodeList(Norm(layer + "input_layernorm", hidden, NormKind::kRms, false), std::move(mixer),
                  Norm(layer + "post_attention_layernorm", hidden, NormKind::kRms, false),
                  std::move(mlp));
}

// Qwen3NextMultiTokenPredictor as the checkpoint stores it: mtp.fc [hidden, 2 x hidden], the
// pre-fc norms of the embedding and of the hidden state, full-attention MoE layers, mtp.norm.
void AddMtp(ConfigReader& config, const NextDims& n, int64_t layers, ModelGraph& g) {
  const int64_t hidden = n.d.hidden;
  std::vector<Node> nodes;
  Node fc;
  fc.kind = NodeKind::kOpaque;
  fc.module = "mtp";
  fc.label = "multi-token prediction (not loaded)";
  AddLinear(fc, "fc", 2 * hidden, hidden, false);
  AddTensor(fc, "pre_fc_norm_embedding.weight", {hidden});
  AddTensor(fc, "pre_fc_norm_hidden.weight", {hidden});
  AddTensor(fc, "norm.weight", {hidden});
  nodes.push_back(std::move(fc));
  for (int64_t k = 0; k < layers; ++k) {
    for (Node& node : LayerNodes(config, n, "mtp.layers." + std::to_string(k) + ".", true, true)) {
      nodes.push_back(std::move(node));
    }
  }
  for (Node& node : nodes) {
    for (TensorSpec& t : node.tensors) t.role = TensorRole::kExtraOnDisk;
    g.extra_nodes.push_back(std::move(node));
  }
}

void BuildQwen3Next(ConfigReader& config, ModelGraph& g) {
  NextDims n{};
  llama::Dims& d = n.d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  d.intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  d.activation = config.String({"hidden_act"}, "silu");
  n.attn = ssm::ReadAttention(config, d.hidden);
  n.delta = {d.hidden,
             config.Positive({"linear_num_key_heads"}, kMaxHeads),
             config.Positive({"linear_num_value_heads"}, kMaxHeads),
             config.Positive({"linear_key_head_dim"}, kMaxWidth),
             config.Positive({"linear_value_head_dim"}, kMaxWidth),
             config.Positive({"linear_conv_kernel_dim"}, 1024, 4, "linear_conv_kernel_dim: 4")};
  const int64_t interval = config.Positive({"full_attention_interval"}, kMaxLayers, 4,
                                           "full_attention_interval absent: 4");
  const int64_t mtp = config.NonNegative(
      {"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 16, 1,
      "MTP layers absent: the released checkpoints store one (mtp.*, not loaded)");
  g.family = "Qwen3-Next: Gated DeltaNet + gated attention (3:1), sparse MoE with a shared expert";
  g.vocab = d.vocab;
  g.hidden = d.hidden;
  g.base_prefix = "model.";
  g.tied = config.Flag({"tie_word_embeddings"}, false);
  UniformLayers(g, d.layers);
  std::vector<bool> attention(static_cast<size_t>(d.layers));
  for (int64_t i = 0; i < d.layers; ++i) attention[static_cast<size_t>(i)] = (i + 1) % interval == 0;
  if (const nlohmann::json* types = config.Find({"layer_types"})) {
    if (!types->is_array() || types->size() != attention.size()) {
      config.Fail("layer_types must list one type per layer");
    } else {
      for (size_t i = 0; i < attention.size(); ++i) attention[i] = (*types)[i] == "full_attention";
    }
  }
  const std::vector<bool> sparse = llama::QwenSparseLayers(config, d.layers);
  if (!config.ok()) return;
  std::array<int, 4> block_of = {-1, -1, -1, -1};
  g.embeddings.push_back(Embedding("model.embed_tokens", d.vocab, d.hidden, "token embedding"));
  for (size_t i = 0; i < attention.size(); ++i) {
    int& block = block_of[attention[i] * 2 + sparse[i]];
    if (block < 0) {
      block = static_cast<int>(g.blocks.size());
      BlockTemplate b;
      b.label = attention[i] ? "Qwen3-Next gated-attention block" : "Qwen3-Next Gated DeltaNet block";
      b.nodes = LayerNodes(config, n, "model.layers.{i}.", attention[i], sparse[i]);
      g.blocks.push_back(std::move(b));
    }
    g.layers[i].block = block;
  }
  g.final_nodes.push_back(Norm("model.norm", d.hidden, NormKind::kRms, false));
  g.final_nodes.push_back(Head("lm_head", d.vocab, d.hidden, g.tied, false, false));
  AddMtp(config, n, mtp, g);
}

}  // namespace

void RegisterQwen3Next(ArchRegistry& registry) { registry.Add("qwen3_next", BuildQwen3Next); }

}  // namespace hubwatch
