// Llama 4's vision encoder (Llama4VisionModel, model_type llama4_vision_model): patches unfolded
// and projected by one bias-free linear (patch_embedding.linear), a learned class embedding and
// positional_embedding_vlm over (image_size / patch_size)^2 + 1 positions, LayerNorms before and
// after a stack of pre-norm layers (q/k/v/o with biases, 2-D RoPE without parameters, GELU
// fc1/fc2 MLP), then the pixel-shuffle adapter (vision_adapter.mlp: fc1 from intermediate_size,
// the width of pixel_shuffle_ratio^-2 shuffled patches, to projector_input_dim, and fc2 over
// projector_output_dim, both bias-free). Its attention reads all patches at once (kNone).

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/vl_composite.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

Node Parameter(const std::string& module, NodeKind kind, TensorShape shape, int64_t width,
               std::string label) {
  Node n;
  n.kind = kind;
  n.module = module;
  n.label = std::move(label);
  n.output_width = width;
  AddTensor(n, "", shape);
  return n;
}

BlockTemplate EncoderLayer(int64_t width, int64_t heads, int64_t inter) {
  const std::string layer = "model.layers.{i}.";
  BlockTemplate b;
  b.label = "Llama 4 vision encoder layer";
  b.nodes = NodeList(Norm(layer + "input_layernorm", width, NormKind::kLayer, true),
                     multimodal::VisionQkvoAttention(layer + "self_attn", "", width, heads, true),
                     Norm(layer + "post_attention_layernorm", width, NormKind::kLayer, true),
                     multimodal::VisionFcMlp(layer + "mlp", "", width, inter, "gelu"));
  return b;
}

void BuildLlama4Vision(ConfigReader& config, ModelGraph& g) {
  const int64_t width = config.Positive({"hidden_size"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  const int64_t inter = config.Positive({"intermediate_size"}, kMaxWidth);
  const int64_t channels = config.Positive({"num_channels"}, 64, 3);
  const int64_t image = config.Positive({"image_size"}, 1 << 16);
  const int64_t patch = config.Positive({"patch_size"}, 1 << 16);
  const int64_t proj_in = config.Positive({"projector_input_dim"}, kMaxWidth);
  const int64_t proj_out = config.Positive({"projector_output_dim"}, kMaxWidth);
  if (width % heads != 0) config.Fail("hidden_size is not divisible by num_attention_heads");
  if (patch > image) config.Fail("patch_size exceeds image_size");
  if (!config.ok()) return;
  const int64_t side = image / patch;
  const int64_t positions = side * side + 1;

  multimodal::MarkTower(g,
                        "Llama 4 vision encoder: unfolded patches, class token, learned positions, "
                        "pre-norm ViT layers with 2-D RoPE, pixel-shuffle MLP adapter",
                        width, positions);
  Node patches = MlpNode("patch_embedding", width, {width, false, "identity"});
  patches.kind = NodeKind::kEmbedding;
  patches.label =
      "unfolded " + std::to_string(patch) + "x" + std::to_string(patch) + " patches, linear";
  AddLinear(patches, "linear", channels * patch * patch, width, false);
  g.embeddings.push_back(std::move(patches));
  g.embeddings.push_back(
      Parameter("class_embedding", NodeKind::kEmbedding, {width}, width, "class token"));
  g.embeddings.push_back(Parameter("positional_embedding_vlm", NodeKind::kPositionEmbedding,
                                   {positions, width}, width,
                                   std::to_string(positions) + " learned positions"));
  g.embeddings.push_back(Norm("layernorm_pre", width, NormKind::kLayer, true));
  g.blocks.push_back(EncoderLayer(width, heads, inter));
  UniformLayers(g, layers);
  g.final_nodes.push_back(Norm("layernorm_post", width, NormKind::kLayer, true));
  Node adapter = MlpNode("vision_adapter.mlp", proj_out, {proj_in, false, "gelu"});
  adapter.label = "pixel-shuffle adapter MLP (gelu), " + std::to_string(inter) + " -> " +
                  std::to_string(proj_in) + " -> " + std::to_string(proj_out);
  adapter.input_width = inter;
  AddLinear(adapter, "fc1", inter, proj_in, false);
  AddLinear(adapter, "fc2", proj_out, proj_out, false);
  g.final_nodes.push_back(std::move(adapter));
}

}  // namespace

void RegisterLlama4Vision(ArchRegistry& registry) {
  registry.Add("llama4_vision_model", BuildLlama4Vision);
}

}  // namespace hubwatch
