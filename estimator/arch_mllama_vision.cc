// Llama 3.2 Vision's encoder (MllamaVisionModel, model_type mllama_vision_model): images cut
// into up to max_num_tiles tiles of image_size, each embedded by a bias-free Conv2d patch
// embedding with a class token; gated positional embeddings (a scalar gate, one embedding per
// patch position, and a tile_embedding per aspect ratio over every tile's positions),
// aspect-ratio tile embeddings before and after the local layers (pre_/post_tile_positional_
// embedding, each gated), LayerNorms before and after; num_hidden_layers local encoder layers
// ("transformer") and num_global_layers gated ones ("global_transformer", tanh gates on
// attention and MLP). Attention: q/k/v/o without biases over all patches (kNone); MLP fc1/fc2
// with biases. The output concatenates the final state with intermediate_layers_indices.

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/vl_composite.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

// Node of one parameter tensor named by its module alone, or module + "." + tensor.
Node Parameters(const std::string& module, NodeKind kind, int64_t width, std::string label,
                std::initializer_list<std::pair<const char*, TensorShape>> tensors) {
  Node n;
  n.kind = kind;
  n.module = module;
  n.label = std::move(label);
  n.output_width = width;
  for (const auto& [name, shape] : tensors) AddTensor(n, name, shape);
  return n;
}

// MllamaVisionEncoderLayer under <stack>.layers.{i}. A gated layer also holds the scalar tanh
// gates gate_attn and gate_ffn beside self_attn and mlp, so its attention and MLP nodes are the
// layer module itself and name their tensors "self_attn.q_proj.weight", "gate_attn" ...
BlockTemplate EncoderLayer(const std::string& stack, int64_t width, int64_t heads, int64_t inter,
                           bool gated) {
  const std::string layer = stack + ".layers.{i}";
  const std::string a = gated ? "self_attn." : "", m = gated ? "mlp." : "";
  Node attn =
      multimodal::VisionQkvoAttention(gated ? layer : layer + ".self_attn", a, width, heads, false);
  Node mlp = multimodal::VisionFcMlp(gated ? layer : layer + ".mlp", m, width, inter, "gelu");
  if (gated) {
    AddTensor(attn, "gate_attn", {1});
    AddTensor(mlp, "gate_ffn", {1});
  }
  BlockTemplate b;
  b.label = gated ? "Mllama global (gated) encoder layer" : "Mllama local encoder layer";
  b.nodes = NodeList(
      Norm(layer + ".input_layernorm", width, NormKind::kLayer, true), std::move(attn),
      Norm(layer + ".post_attention_layernorm", width, NormKind::kLayer, true), std::move(mlp));
  return b;
}

void BuildMllamaVision(ConfigReader& config, ModelGraph& g) {
  const int64_t width = config.Positive({"hidden_size"}, kMaxWidth);
  const int64_t local = config.Positive({"num_hidden_layers"}, kMaxLayers);
  const int64_t global = config.NonNegative({"num_global_layers"}, kMaxLayers, 8);
  const int64_t heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  const int64_t inter = config.Positive({"intermediate_size"}, kMaxWidth);
  const int64_t channels = config.Positive({"num_channels"}, 64, 3);
  const int64_t image = config.Positive({"image_size"}, 1 << 16);
  const int64_t patch = config.Positive({"patch_size"}, 1 << 16);
  const int64_t tiles = config.Positive({"max_num_tiles"}, 64, 4);
  if (width % heads != 0) config.Fail("hidden_size is not divisible by num_attention_heads");
  if (patch > image) config.Fail("patch_size exceeds image_size");
  // supported_aspect_ratios: every (w, h) with w * h <= max_num_tiles unless listed.
  int64_t ratios = 0;
  if (const nlohmann::json* listed = config.Find({"supported_aspect_ratios"});
      listed && listed->is_array()) {
    ratios = static_cast<int64_t>(listed->size());
  } else {
    for (int64_t w = 1; w <= tiles; ++w) ratios += tiles / w;
  }
  if (!config.ok()) return;
  const int64_t positions = (image / patch) * (image / patch) + 1;
  multimodal::MarkTower(
      g,
      "Mllama vision encoder: tiled ViT, gated positional and tile embeddings, local "
      "layers then gated global layers",
      width, positions);
  Node patches = Parameters(
      "patch_embedding", NodeKind::kEmbedding, width,
      "Conv2d " + std::to_string(patch) + "x" + std::to_string(patch) + " patch embedding",
      {{"weight", {width, channels, patch, patch}}});
  g.embeddings.push_back(std::move(patches));
  g.embeddings.push_back(
      Parameters("class_embedding", NodeKind::kEmbedding, width, "class token", {{"", {width}}}));
  g.embeddings.push_back(Parameters(
      "gated_positional_embedding", NodeKind::kPositionEmbedding, width,
      "gated positions: " + std::to_string(positions) + " per tile, per aspect ratio per tile",
      {{"gate", {1}},
       {"embedding", {positions, width}},
       {"tile_embedding.weight", {ratios + 1, tiles * positions * width}}}));
  for (const char* name : {"pre_tile_positional_embedding", "post_tile_positional_embedding"}) {
    g.embeddings.push_back(Parameters(
        name, NodeKind::kPositionEmbedding, width, "gated tile embedding per aspect ratio",
        {{"gate", {1}}, {"embedding.weight", {ratios + 1, tiles * width}}}));
  }
  g.embeddings.push_back(Norm("layernorm_pre", width, NormKind::kLayer, true));
  g.blocks.push_back(EncoderLayer("transformer", width, heads, inter, false));
  g.blocks.push_back(EncoderLayer("global_transformer", width, heads, inter, true));
  for (int64_t i = 0; i < local; ++i) g.layers.push_back(LayerSpec{0, 0, i});
  for (int64_t i = 0; i < global; ++i) g.layers.push_back(LayerSpec{1, 0, i});
  g.final_nodes.push_back(Norm("layernorm_post", width, NormKind::kLayer, true));
}

}  // namespace

void RegisterMllamaVision(ArchRegistry& registry) {
  registry.Add("mllama_vision_model", BuildMllamaVision);
}

}  // namespace hubwatch
