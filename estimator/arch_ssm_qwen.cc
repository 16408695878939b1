// qwen3_next (Qwen3NextForCausalLM): Gated DeltaNet linear attention in three of every four
// layers, gated softmax attention (q_proj also emits a sigmoid output gate; q_norm/k_norm) in
// the fourth, every layer's MLP a Qwen2-MoE-style sparse block with a shared expert. The
// checkpoint also stores a multi-token-prediction block (mtp.*) that transformers does not load.
// qwen3_5_moe (Qwen3_5MoeForConditionalGeneration) is the same decoder under
// model.language_model (its text_config; qwen3_5_moe_text alone) beside a ViT (model.visual).

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/llama_moe.h"
#include "estimator/ssm_parts.h"
#include "estimator/vl_composite.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

constexpr llama::LlamaFamily kQwenMoe{.model_type = "qwen3_next", .moe = llama::Moe::kQwen2Moe};

struct NextDims {
  llama::Dims d;
  ssm::AttentionDims attn;
  ssm::DeltaNetDims delta;
  bool gated = true;  // attention's sigmoid output gate (attn_output_gate)
};

// Where a decoder's modules sit: Qwen3-Next's own, or Qwen3.5's under model.language_model
// with its delta net's projections split.
struct TextLayout {
  const char* root;  // "model." or "model.language_model."
  bool qwen3_5;
};

// A decoder layer's nodes under `layer` ("model.layers.{i}." or "mtp.layers.0."): norms,
// attention or the delta net, then the MoE (or a dense MLP for mlp_only_layers).
std::vector<Node> LayerNodes(ConfigReader& config, const NextDims& n, const std::string& layer,
                             bool attention, bool sparse) {
  const int64_t hidden = n.d.hidden;
  Node mixer = attention ? ssm::HybridAttention(layer + "self_attn", n.attn, "o_proj", n.gated,
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

void BuildText(const TextLayout& layout, ConfigReader& config, ModelGraph& g) {
  const std::string root = layout.root;
  NextDims n{};
  llama::Dims& d = n.d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  d.activation = config.String({"hidden_act"}, "silu");
  n.attn = ssm::ReadAttention(config, d.hidden);
  n.delta = {d.hidden,
             config.Positive({"linear_num_key_heads"}, kMaxHeads),
             config.Positive({"linear_num_value_heads"}, kMaxHeads),
             config.Positive({"linear_key_head_dim"}, kMaxWidth),
             config.Positive({"linear_value_head_dim"}, kMaxWidth),
             config.Positive({"linear_conv_kernel_dim"}, 1024, 4, "linear_conv_kernel_dim: 4"),
             layout.qwen3_5};
  n.gated = config.Flag({"attn_output_gate"}, true);
  const int64_t interval = config.Positive({"full_attention_interval"}, kMaxLayers, 4,
                                           "full_attention_interval absent: 4");
  const int64_t mtp = config.NonNegative(
      {"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 16, 1,
      "MTP layers absent: the released checkpoints store one (mtp.*, not loaded)");
  g.family = std::string(layout.qwen3_5 ? "Qwen3.5" : "Qwen3-Next") +
             ": Gated DeltaNet + gated attention (3:1), sparse MoE with a shared expert";
  g.vocab = d.vocab;
  g.hidden = d.hidden;
  g.max_positions = config.Positive({"max_position_embeddings"}, kMaxPositions, 0,
                                    "max_position_embeddings absent");
  g.base_prefix = root;
  g.tied = config.Flag({"tie_word_embeddings"}, false);
  UniformLayers(g, d.layers);
  std::vector<bool> attention(static_cast<size_t>(d.layers));
  for (int64_t i = 0; i < d.layers; ++i)
    attention[static_cast<size_t>(i)] = (i + 1) % interval == 0;
  if (const nlohmann::json* types = config.Find({"layer_types"})) {
    if (!types->is_array() || types->size() != attention.size()) {
      config.Fail("layer_types must list one type per layer");
    } else {
      for (size_t i = 0; i < attention.size(); ++i) attention[i] = (*types)[i] == "full_attention";
    }
  }
  const std::vector<bool> sparse = llama::SparseLayers(kQwenMoe, config, d.layers);
  // Only dense layers (mlp_only_layers) read it; Qwen3.5's text_config has none and no width.
  if (std::find(sparse.begin(), sparse.end(), false) != sparse.end()) {
    d.intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  }
  if (!config.ok()) return;
  std::array<int, 4> block_of = {-1, -1, -1, -1};
  g.embeddings.push_back(Embedding(root + "embed_tokens", d.vocab, d.hidden, "token embedding"));
  for (size_t i = 0; i < attention.size(); ++i) {
    int& block = block_of[attention[i] * 2 + sparse[i]];
    if (block < 0) {
      block = static_cast<int>(g.blocks.size());
      BlockTemplate b;
      b.label = attention[i] ? "gated-attention block" : "Gated DeltaNet block";
      b.nodes = LayerNodes(config, n, root + "layers.{i}.", attention[i], sparse[i]);
      g.blocks.push_back(std::move(b));
    }
    g.layers[i].block = block;
  }
  g.final_nodes.push_back(Norm(root + "norm", d.hidden, NormKind::kRms, false));
  g.final_nodes.push_back(Head("lm_head", d.vocab, d.hidden, g.tied, false, false));
  AddMtp(config, n, mtp, g);
}

// Qwen3_5MoeVisionModel (model.visual): a Conv3d patch embedding over temporal_patch_size x
// patch_size^2 pixels, learned position embeddings, `depth` pre-LayerNorm ViT blocks (fused qkv,
// biased linears, GELU MLP) and the patch merger (LayerNorm, then two linears over
// spatial_merge_size^2 patches to out_hidden_size). It reads each image whole: no KV cache.
ModelGraph Vision(ConfigReader& v) {
  const int64_t hidden = v.Positive({"hidden_size"}, kMaxWidth);
  const int64_t depth = v.Positive({"depth"}, kMaxLayers);
  const int64_t heads = v.Positive({"num_heads"}, kMaxHeads);
  const int64_t inter = v.Positive({"intermediate_size"}, kMaxWidth);
  const int64_t out = v.Positive({"out_hidden_size"}, kMaxWidth);
  const int64_t channels = v.Positive({"in_channels"}, 16, 3);
  const int64_t patch = v.Positive({"patch_size"}, 1024, 16);
  const int64_t temporal = v.Positive({"temporal_patch_size"}, 1024, 2);
  const int64_t merge = v.Positive({"spatial_merge_size"}, 64, 2);
  const int64_t positions = v.Positive({"num_position_embeddings"}, kMaxPositions, 2304);
  const std::string act = v.String({"hidden_act"}, "gelu_pytorch_tanh");
  if (!v.IntList({"deepstack_visual_indexes"}).empty()) {
    v.Fail("deepstack_visual_indexes: Qwen3-VL's deepstack mergers are not modelled");
  }
  if (hidden % heads != 0) v.Fail("vision hidden_size is not divisible by num_heads");
  ModelGraph g;
  if (!v.ok()) return g;
  const std::string root = "model.visual.";
  Node embed;
  embed.kind = NodeKind::kEmbedding;
  embed.module = root + "patch_embed";
  embed.label = "Conv3d patch embedding, " + std::to_string(temporal) + "x" +
                std::to_string(patch) + "x" + std::to_string(patch);
  embed.output_width = hidden;
  AddTensor(embed, "proj.weight", {hidden, channels, temporal, patch, patch});
  AddTensor(embed, "proj.bias", {hidden});
  g.embeddings.push_back(std::move(embed));
  g.embeddings.push_back(Embedding(root + "pos_embed", positions, hidden, "position embedding"));
  g.embeddings.back().kind = NodeKind::kPositionEmbedding;

  Node attn = multimodal::VisionAttention(root + "blocks.{i}.attn", hidden, heads, hidden / heads);
  AddLinear(attn, "qkv", hidden, 3 * hidden, true);
  AddLinear(attn, "proj", hidden, hidden, true);
  Node mlp = MlpNode(root + "blocks.{i}.mlp", hidden, {inter, false, act});
  AddLinear(mlp, "linear_fc1", hidden, inter, true);
  AddLinear(mlp, "linear_fc2", inter, hidden, true);
  BlockTemplate block;
  block.label = "ViT block";
  block.nodes =
      NodeList(Norm(root + "blocks.{i}.norm1", hidden, NormKind::kLayer, true), std::move(attn),
               Norm(root + "blocks.{i}.norm2", hidden, NormKind::kLayer, true), std::move(mlp));
  g.blocks.push_back(std::move(block));
  UniformLayers(g, depth);

  const int64_t merged = hidden * merge * merge;
  Node merger = MlpNode(root + "merger", out, {merged, false, "gelu"});
  merger.input_width = merged;
  AddLinear(merger, "linear_fc1", merged, merged, true);
  AddLinear(merger, "linear_fc2", merged, out, true);
  g.final_nodes.push_back(Norm(root + "merger.norm", hidden, NormKind::kLayer, true));
  g.final_nodes.push_back(std::move(merger));
  return g;
}

// One part of the composite through a reader of its own, its errors and notes passed up.
template <class Build>
ModelGraph Part(ConfigReader& config, const char* key, Build&& build) {
  ModelGraph part;
  const nlohmann::json* json = multimodal::SubConfig(config, key);
  if (!json) return part;
  ConfigReader reader(*json, config.depth() + 1);
  build(reader, part);
  multimodal::Forward(reader, config, key);
  return part;
}

void BuildQwen35Moe(ConfigReader& config, ModelGraph& g) {
  ModelGraph text = Part(config, "text_config", [](ConfigReader& t, ModelGraph& part) {
    BuildText({"model.language_model.", true}, t, part);
    part.dtype = SafetensorsDtype(t.String({"torch_dtype", "dtype"}, ""));
  });
  ModelGraph vision =
      Part(config, "vision_config", [](ConfigReader& v, ModelGraph& part) { part = Vision(v); });
  if (!config.ok()) return;
  g.family = text.family + ", with a ViT";
  g.vocab = text.vocab;
  g.hidden = text.hidden;
  g.max_positions = text.max_positions;
  g.tied = text.tied;
  g.dtype = text.dtype;  // the top level's torch_dtype, when present, wins
  g.base_prefix = "model.";
  const std::string vision_label = "ViT, " + std::to_string(vision.layers.size()) + " blocks";
  const std::string text_label = text.family;
  // The decoder first: its attention is the model's (the lints read the first attention node).
  AppendSection(g, std::move(text), {"text decoder", text_label});
  AppendSection(g, std::move(vision), {"vision tower", vision_label});
}

}  // namespace

void RegisterQwen3Next(ArchRegistry& registry) {
  registry.Add("qwen3_next", [](ConfigReader& config, ModelGraph& g) {
    BuildText({"model.", false}, config, g);
  });
  registry.Add("qwen3_5_moe_text", [](ConfigReader& config, ModelGraph& g) {
    BuildText({"model.", true}, config, g);
  });
  registry.Add("qwen3_5_moe", BuildQwen35Moe);
}

}  // namespace hubwatch
