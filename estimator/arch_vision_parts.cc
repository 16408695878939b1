#include "estimator/arch_vision_parts.h"

#include "estimator/encoder_parts.h"
#include "estimator/graph_builder.h"

namespace hubwatch::vision {

using namespace build;  // NOLINT: internal helpers

int64_t ReadDefault(ConfigReader& config, Keys keys, int64_t max, int64_t fallback,
                    std::string_view what, std::string_view config_class) {
  return config.Positive(keys, max, fallback,
                         std::string(what) + " absent: " + std::string(config_class) +
                             "'s default " + std::to_string(fallback));
}

TowerDims ReadTowerDims(ConfigReader& config, const TowerDefaults& d, bool vision) {
  TowerDims t;
  const std::string_view cls = d.config_class;
  t.hidden = ReadDefault(config, {"hidden_size"}, kMaxWidth, d.hidden, "hidden_size", cls);
  if (d.intermediate) {
    t.intermediate = ReadDefault(config, {"intermediate_size"}, kMaxWidth, d.intermediate,
                                 "intermediate_size", cls);
  }
  t.layers =
      ReadDefault(config, {"num_hidden_layers"}, kMaxLayers, d.layers, "num_hidden_layers", cls);
  t.heads =
      ReadDefault(config, {"num_attention_heads"}, kMaxHeads, d.heads, "num_attention_heads", cls);
  t.activation = config.String({"hidden_act"}, d.activation);
  if (t.hidden % t.heads != 0) {
    config.Fail("hidden_size " + std::to_string(t.hidden) + " is not divisible by " +
                "num_attention_heads " + std::to_string(t.heads));
  }
  t.head_dim = t.hidden / t.heads;
  if (!vision) return t;
  t.channels = config.Positive({"num_channels"}, 64, 3, "num_channels absent: 3 (RGB)");
  t.image_size = ReadDefault(config, {"image_size"}, kMaxWidth, d.image_size, "image_size", cls);
  t.patch_size = ReadDefault(config, {"patch_size"}, kMaxWidth, d.patch_size, "patch_size", cls);
  const int64_t side = t.image_size / t.patch_size;
  if (side == 0) {
    config.Fail("patch_size " + std::to_string(t.patch_size) + " exceeds image_size " +
                std::to_string(t.image_size));
  } else if (side > kMaxPositions / side) {
    config.Fail("image_size / patch_size gives more than " + std::to_string(kMaxPositions) +
                " patches per image");
  } else {
    t.patches = side * side;
  }
  return t;
}

Node PatchEmbedding(const std::string& module, const std::string& name, const TowerDims& d,
                    bool bias) {
  Node n;
  n.kind = NodeKind::kEmbedding;
  n.module = module;
  n.label = "patch embedding: Conv2d " + std::to_string(d.channels) + " -> " +
            std::to_string(d.hidden) + ", " + std::to_string(d.patch_size) + "x" +
            std::to_string(d.patch_size) + " patches";
  n.output_width = d.hidden;
  TensorSpec& w =
      AddTensor(n, name + ".weight", {d.hidden, d.channels, d.patch_size, d.patch_size});
  w.linear_in = d.channels * d.patch_size * d.patch_size;
  w.linear_out = d.hidden;
  if (bias) AddTensor(n, name + ".bias", {d.hidden});
  return n;
}

void MarkTower(ModelGraph& g) { encoder::MarkEncoder(g); }

Node TowerAttention(const std::string& module, const TowerDims& d,
                    std::initializer_list<const char*> projections, bool bias) {
  Node attn = AttentionNode(module, encoder::EncoderAttention(d.heads, d.head_dim));
  attn.output_width = d.hidden;
  for (const char* name : projections) AddLinear(attn, name, d.hidden, d.hidden, bias);
  return attn;
}

BlockTemplate ClipEncoderLayer(const std::string& layer, const TowerDims& d, std::string label) {
  Node attn =
      TowerAttention(layer + ".self_attn", d, {"q_proj", "k_proj", "v_proj", "out_proj"}, true);
  Node mlp = MlpNode(layer + ".mlp", d.hidden, {d.intermediate, false, d.activation});
  AddLinear(mlp, "fc1", d.hidden, d.intermediate, true);
  AddLinear(mlp, "fc2", d.intermediate, d.hidden, true);
  return {std::move(label),
          NodeList(Norm(layer + ".layer_norm1", d.hidden, NormKind::kLayer, true), std::move(attn),
                   Norm(layer + ".layer_norm2", d.hidden, NormKind::kLayer, true), std::move(mlp))};
}

std::string TowerLabel(std::string_view what, const TowerDims& d) {
  std::string label = std::string(what) + ", " + std::to_string(d.layers) + " layers, hidden " +
                      std::to_string(d.hidden);
  if (d.patch_size) {
    label += ", " + std::to_string(d.patch_size) + "x" + std::to_string(d.patch_size) +
             " patches of " + std::to_string(d.image_size) + "x" + std::to_string(d.image_size);
  }
  return label;
}

}  // namespace hubwatch::vision
