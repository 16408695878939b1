// Image towers with a layout of their own: vit (ViTModel) and dinov2 (Dinov2Model), rows of one
// ViT layout (kVitLike: class token, learned positions, pre-norm layers, a final LayerNorm), and
// pixtral (PixtralVisionModel: RMSNorm, gated MLP, 2-D rotary positions, no class token), the
// tower of Mistral-3. Each reads its whole input at once: no attention caches anything.
//
// ViTModel and Dinov2Model name their tensors under base_model_prefix ("vit.", "dinov2."), as a
// ...ForImageClassification checkpoint stores them; a checkpoint of the bare model omits it.

#include "estimator/arch_registry.h"
#include "estimator/arch_vision_parts.h"
#include "estimator/encoder_parts.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

using namespace build;   // NOLINT: internal helpers
using namespace vision;  // NOLINT: the towers' shared parts

struct VitLike {
  std::string_view model_type = {};
  std::string_view family = {};
  std::string_view prefix = {};  // base_model_prefix + "."
  TowerDefaults defaults = {};
  bool dinov2 = false;  // mask_token, layer scale, norm1/norm2, mlp.fc1/fc2 or SwiGLU, no pooler
};

const VitLike kVitLike[] = {
    {.model_type = "vit",
     .family = "ViT: class token, learned positions, pre-LayerNorm encoder, pooler",
     .prefix = "vit.",
     .defaults = {"ViTConfig", 768, 3072, 12, 12, 224, 16, "gelu"}},
    // Dinov2Config has no intermediate_size: hidden_size * mlp_ratio.
    {.model_type = "dinov2",
     .family = "DINOv2: ViT with a mask token and layer scale, no pooler",
     .prefix = "dinov2.",
     .defaults = {"Dinov2Config", 768, 0, 12, 12, 224, 14, "gelu"},
     .dinov2 = true},
};

// Dinov2's MLP: fc1/fc2, or with use_swiglu_ffn Dinov2SwiGLUFFN (weights_in packs gate and up;
// its width is 2/3 of hidden * mlp_ratio, rounded up to a multiple of 8).
Node DinoMlp(ConfigReader& config, const std::string& layer, const TowerDims& d) {
  if (!config.Flag({"use_swiglu_ffn"}, false)) {
    Node mlp = MlpNode(layer, d.hidden, {d.intermediate, false, d.activation});
    AddLinear(mlp, "mlp.fc1", d.hidden, d.intermediate, true);
    AddLinear(mlp, "mlp.fc2", d.intermediate, d.hidden, true);
    return mlp;
  }
  const int64_t width = (d.intermediate * 2 / 3 + 7) / 8 * 8;
  Node mlp = MlpNode(layer, d.hidden, {width, true, "silu"});
  AddLinear(mlp, "mlp.weights_in", d.hidden, 2 * width, true);
  AddLinear(mlp, "mlp.weights_out", width, d.hidden, true);
  return mlp;
}

void BuildVitLike(const VitLike& f, ConfigReader& config, ModelGraph& g) {
  TowerDims d = ReadTowerDims(config, f.defaults, true);
  if (f.dinov2) {
    const int64_t ratio = config.Positive({"mlp_ratio"}, 64, 4, "mlp_ratio absent: 4");
    d.intermediate = d.hidden * ratio;
  }
  const bool qkv_bias = config.Flag({"qkv_bias"}, true, "qkv_bias absent: true (the default)");
  const std::string p(f.prefix);
  g.family = f.family;
  g.hidden = d.hidden;
  g.max_positions = d.patches + 1;
  g.base_prefix = p;
  MarkTower(g);

  const std::string emb = p + "embeddings";
  Node cls = encoder::Table(emb, "cls_token", 1, d.hidden, NodeKind::kEmbedding, "class token");
  cls.tensors[0].shape = {1, 1, d.hidden};
  if (f.dinov2) AddTensor(cls, "mask_token", {1, d.hidden});
  g.embeddings.push_back(std::move(cls));
  g.embeddings.push_back(PatchEmbedding(emb, "patch_embeddings.projection", d, true));
  Node pos =
      encoder::Table(emb, "position_embeddings", 1, d.hidden, NodeKind::kPositionEmbedding,
                     "learned position embedding, " + std::to_string(d.patches + 1) + " positions");
  pos.tensors[0].shape = {1, d.patches + 1, d.hidden};
  g.embeddings.push_back(std::move(pos));

  const std::string layer = p + "encoder.layer.{i}";
  Node attn = TowerAttention(
      layer, d,
      {"attention.attention.query", "attention.attention.key", "attention.attention.value"},
      qkv_bias);
  AddLinear(attn, "attention.output.dense", d.hidden, d.hidden, true);
  Node mlp;
  if (f.dinov2) {
    AddTensor(attn, "layer_scale1.lambda1", {d.hidden});
    mlp = DinoMlp(config, layer, d);
    AddTensor(mlp, "layer_scale2.lambda1", {d.hidden});
  } else {
    mlp = MlpNode(layer, d.hidden, {d.intermediate, false, d.activation});
    AddLinear(mlp, "intermediate.dense", d.hidden, d.intermediate, true);
    AddLinear(mlp, "output.dense", d.intermediate, d.hidden, true);
  }
  const char* norm1 = f.dinov2 ? ".norm1" : ".layernorm_before";
  const char* norm2 = f.dinov2 ? ".norm2" : ".layernorm_after";
  g.blocks.push_back(
      {std::string(f.model_type) + " encoder layer (pre-LayerNorm)",
       NodeList(Norm(layer + norm1, d.hidden, NormKind::kLayer, true), std::move(attn),
                Norm(layer + norm2, d.hidden, NormKind::kLayer, true), std::move(mlp))});
  UniformLayers(g, d.layers);
  g.final_nodes.push_back(Norm(p + "layernorm", d.hidden, NormKind::kLayer, true));
  if (!f.dinov2) {
    // ViTModel(add_pooling_layer=True): dense + tanh on the class token.
    const int64_t out = config.Positive({"pooler_output_size"}, kMaxWidth, d.hidden);
    Node pooler =
        encoder::HeadNode(p + "pooler", "pooler: dense + tanh on the class token", d.hidden, out);
    AddLinear(pooler, "dense", d.hidden, out, true);
    g.final_nodes.push_back(std::move(pooler));
  }
}

// PixtralVisionModel: patch_conv (no bias), ln_pre, transformer.layers (attention_norm,
// attention.{q,k,v,o}_proj, ffn_norm, feed_forward gate/up/down), all RMSNorm and bias-free. Its
// rotary table (patch_positional_embedding.inv_freq, one row per patch position of the largest
// image) is a buffer transformers does not save.
void BuildPixtral(ConfigReader& config, ModelGraph& g) {
  const TowerDims d =
      ReadTowerDims(config, {"PixtralVisionConfig", 1024, 4096, 24, 16, 1024, 16, "gelu"}, true);
  g.family = "Pixtral vision tower: RMSNorm, gated MLP, 2-D rotary positions, no class token";
  g.hidden = d.hidden;
  g.max_positions = d.patches;
  MarkTower(g);
  g.embeddings.push_back(PatchEmbedding("", "patch_conv", d, false));
  g.embeddings.push_back(Norm("ln_pre", d.hidden, NormKind::kRms, false));
  Node rope = encoder::Table("patch_positional_embedding", "inv_freq", d.patches, d.head_dim,
                             NodeKind::kPositionEmbedding, "2-D rotary frequencies (buffer)");
  rope.tensors[0].role = TensorRole::kBuffer;
  rope.tensors[0].stored = false;
  g.embeddings.push_back(std::move(rope));

  const std::string layer = "transformer.layers.{i}";
  Node attn =
      TowerAttention(layer + ".attention", d, {"q_proj", "k_proj", "v_proj", "o_proj"}, false);
  Node mlp = MlpNode(layer + ".feed_forward", d.hidden, {d.intermediate, true, d.activation});
  AddLinear(mlp, "gate_proj", d.hidden, d.intermediate, false);
  AddLinear(mlp, "up_proj", d.hidden, d.intermediate, false);
  AddLinear(mlp, "down_proj", d.intermediate, d.hidden, false);
  g.blocks.push_back(
      {"pixtral encoder layer",
       NodeList(Norm(layer + ".attention_norm", d.hidden, NormKind::kRms, false), std::move(attn),
                Norm(layer + ".ffn_norm", d.hidden, NormKind::kRms, false), std::move(mlp))});
  UniformLayers(g, d.layers);
}

}  // namespace

void RegisterVitTowers(ArchRegistry& registry) {
  for (const VitLike& f : kVitLike) {
    registry.Add(f.model_type,
                 [&f](ConfigReader& config, ModelGraph& graph) { BuildVitLike(f, config, graph); });
  }
  registry.Add("pixtral", BuildPixtral);
}

}  // namespace hubwatch
