// CLIP-style towers and the dual encoders built from them. A tower reads its whole input in one
// forward pass: its attention caches nothing (KvCaching::kNone), it decodes nothing and computes
// no vocabulary logits.
//
// The towers are rows of one layout (kClipLike): an embedding (patches or tokens, learned
// positions), CLIPEncoderLayer blocks (layer_norm1, self_attn, layer_norm2, mlp) and a final
// LayerNorm, with the switches in which CLIP's vision tower (class token, pre_layrnorm), SigLIP's
// (biased patch conv, attention-pooling head) and Idefics3's differ. Each is a model_type of its
// own (clip_vision_model, siglip_vision_model, ...) so that a composite reaches it through
// BuildPart with its vision_config (arch_multimodal.cc). The dual encoders `clip` (CLIPModel) and
// `siglip` (SiglipModel) are two such towers as sections "text tower" and "vision tower", plus
// their projections and logit scale.

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/arch_vision_parts.h"
#include "estimator/encoder_parts.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

using namespace build;   // NOLINT: internal helpers
using namespace vision;  // NOLINT: the towers' shared parts

enum class TowerHead {
  kNone,
  kSiglipPooling,  // SiglipMultiheadAttentionPoolingHead, when vision_use_head (default true)
  kSiglipText,     // SiglipTextTransformer.head: Linear(hidden, projection_size), biased
};

struct ClipLike {
  std::string_view model_type = {};
  std::string_view family = {};
  // The wrapper class's attribute holding the transformer (CLIPVisionModel.vision_model); empty
  // where the transformer is the model itself (Idefics3VisionTransformer).
  std::string_view root = {};
  TowerDefaults defaults = {};
  bool vision = true;         // patches (else tokens)
  bool class_token = false;   // CLIP: embeddings.class_embedding, one more position
  bool pre_norm = false;      // CLIP: pre_layrnorm (sic) before the encoder
  bool conv_bias = false;     // SigLIP, Idefics3: the patch Conv2d has a bias
  bool position_ids = false;  // registers embeddings.position_ids (persistent=False)
  std::string_view final_norm = "post_layernorm";
  TowerHead head = TowerHead::kNone;
};

const ClipLike kClipLike[] = {
    {.model_type = "clip_vision_model",
     .family = "CLIP vision tower: ViT with a class token, pre- and post-LayerNorm, quick-GELU MLP",
     .root = "vision_model.",
     .defaults = {"CLIPVisionConfig", 768, 3072, 12, 12, 224, 32, "quick_gelu"},
     .class_token = true,
     .pre_norm = true,
     .position_ids = true},
    {.model_type = "clip_text_model",
     .family = "CLIP text tower: causal-masked transformer encoder, learned positions",
     .root = "text_model.",
     .defaults = {"CLIPTextConfig", 512, 2048, 12, 8, 0, 0, "quick_gelu", 49408, 77},
     .vision = false,
     .position_ids = true,
     .final_norm = "final_layer_norm"},
    {.model_type = "siglip_vision_model",
     .family = "SigLIP vision tower: ViT without class token, post-LayerNorm, optional "
               "attention-pooling head",
     .root = "vision_model.",
     .defaults = {"SiglipVisionConfig", 768, 3072, 12, 12, 224, 16, "gelu_pytorch_tanh"},
     .conv_bias = true,
     .position_ids = true,
     .head = TowerHead::kSiglipPooling},
    {.model_type = "siglip_text_model",
     .family = "SigLIP text tower: transformer encoder, learned positions, linear head",
     .root = "text_model.",
     .defaults = {"SiglipTextConfig", 768, 3072, 12, 12, 0, 0, "gelu_pytorch_tanh", 32000, 64},
     .vision = false,
     .position_ids = true,
     .final_norm = "final_layer_norm",
     .head = TowerHead::kSiglipText},
    // Idefics3VisionTransformer (SigLIP's layout, positions for image_size / patch_size per side)
    {.model_type = "idefics3_vision",
     .family = "Idefics3 vision tower: SigLIP layout without a head",
     .defaults = {"Idefics3VisionConfig", 1152, 3072, 12, 16, 224, 32, "gelu_pytorch_tanh"},
     .conv_bias = true},
    {.model_type = "smolvlm_vision",
     .family = "SmolVLM vision tower: SigLIP layout without a head",
     .defaults = {"SmolVLMVisionConfig", 1152, 3072, 12, 16, 224, 32, "gelu_pytorch_tanh"},
     .conv_bias = true},
};

Node PositionTable(const std::string& emb, int64_t positions, int64_t hidden, bool ids) {
  Node pos = encoder::Table(
      emb, "position_embedding.weight", positions, hidden, NodeKind::kPositionEmbedding,
      "learned position embedding, " + std::to_string(positions) + " positions");
  if (ids) encoder::AddPositionIds(pos, positions, false);
  return pos;
}

// SiglipMultiheadAttentionPoolingHead: a learned probe attends over the patches
// (nn.MultiheadAttention: packed in_proj), then LayerNorm and an MLP.
Node SiglipPoolingHead(const std::string& module, const TowerDims& d) {
  Node n = encoder::HeadNode(module, "attention-pooling head (probe, MultiheadAttention, MLP)",
                             d.hidden, d.hidden);
  AddTensor(n, "probe", {1, 1, d.hidden});
  TensorSpec& in = AddTensor(n, "attention.in_proj_weight", {3 * d.hidden, d.hidden});
  in.linear_in = d.hidden;
  in.linear_out = 3 * d.hidden;
  AddTensor(n, "attention.in_proj_bias", {3 * d.hidden});
  AddLinear(n, "attention.out_proj", d.hidden, d.hidden, true);
  encoder::AddLayerNorm(n, "layernorm", d.hidden, true);
  AddLinear(n, "mlp.fc1", d.hidden, d.intermediate, true);
  AddLinear(n, "mlp.fc2", d.intermediate, d.hidden, true);
  return n;
}

void BuildClipLike(const ClipLike& f, ConfigReader& config, ModelGraph& g) {
  const TowerDims d = ReadTowerDims(config, f.defaults, f.vision);
  const std::string root(f.root);
  const std::string emb = root + "embeddings";
  g.family = f.family;
  g.hidden = d.hidden;
  MarkTower(g);
  if (f.vision) {
    const int64_t positions = d.patches + (f.class_token ? 1 : 0);
    g.max_positions = positions;
    if (f.class_token) {
      Node cls =
          encoder::Table(emb, "class_embedding", 1, d.hidden, NodeKind::kEmbedding, "class token");
      cls.tensors[0].shape = {d.hidden};
      g.embeddings.push_back(std::move(cls));
    }
    g.embeddings.push_back(PatchEmbedding(emb, "patch_embedding", d, f.conv_bias));
    g.embeddings.push_back(PositionTable(emb, positions, d.hidden, f.position_ids));
  } else {
    g.vocab = ReadDefault(config, {"vocab_size"}, kMaxVocab, f.defaults.vocab, "vocab_size",
                          f.defaults.config_class);
    g.max_positions =
        ReadDefault(config, {"max_position_embeddings"}, kMaxPositions, f.defaults.max_positions,
                    "max_position_embeddings", f.defaults.config_class);
    g.embeddings.push_back(encoder::Table(emb, "token_embedding.weight", g.vocab, d.hidden,
                                          NodeKind::kEmbedding, "token embedding"));
    g.embeddings.push_back(PositionTable(emb, g.max_positions, d.hidden, f.position_ids));
  }
  if (f.pre_norm)
    g.embeddings.push_back(Norm(root + "pre_layrnorm", d.hidden, NormKind::kLayer, true));
  g.blocks.push_back(ClipEncoderLayer(root + "encoder.layers.{i}", d,
                                      std::string(f.model_type) + " encoder layer"));
  UniformLayers(g, d.layers);
  g.final_nodes.push_back(Norm(root + std::string(f.final_norm), d.hidden, NormKind::kLayer, true));
  if (f.head == TowerHead::kSiglipPooling &&
      config.Flag({"vision_use_head"}, true, "vision_use_head absent: true (the default)")) {
    g.final_nodes.push_back(SiglipPoolingHead(root + "head", d));
  } else if (f.head == TowerHead::kSiglipText) {
    const int64_t out = config.Positive({"projection_size"}, kMaxWidth, d.hidden,
                                        "projection_size absent: hidden_size (the default)");
    Node head = encoder::HeadNode(root + "head", "text head", d.hidden, out);
    AddLinear(head, "", d.hidden, out, true);
    g.final_nodes.push_back(std::move(head));
  }
}

// ---------------------------------------------------------------------------------------------
// Dual encoders: CLIPModel / SiglipModel.

struct DualEncoder {
  std::string_view model_type, family, text_type, vision_type;
  bool projections;  // CLIP: text_projection, visual_projection (no bias), logit_scale []
};

const DualEncoder kDualEncoders[] = {
    {"clip", "CLIP dual encoder: text and vision towers projected into one embedding space",
     "clip_text_model", "clip_vision_model", true},
    {"siglip",
     "SigLIP dual encoder: text and vision towers with heads, sigmoid loss (logit "
     "scale and bias)",
     "siglip_text_model", "siglip_vision_model", false},
};

// Appends the tower of config.json's `key` as a section; returns its width (0 after Fail).
int64_t AppendTower(ConfigReader& config, ModelGraph& g, const char* key, std::string_view type,
                    const char* section) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json* part = config.Find({key});
  if (!part) config.Note(std::string(key) + " absent: the tower's defaults");
  Result<ModelGraph> tower = BuildPart(config, part ? *part : kEmpty, key, type);
  if (!tower.ok()) {
    config.Fail(tower.error().message);
    return 0;
  }
  // "CLIP text tower, 12 layers, hidden 512": the family up to its colon.
  const std::string label =
      TowerLabel(tower->family.substr(0, tower->family.find(':')),
                 {.hidden = tower->hidden, .layers = static_cast<int64_t>(tower->layers.size())});
  if (g.vocab == 0) g.vocab = tower->vocab;
  if (g.max_positions == 0) g.max_positions = tower->max_positions;
  if (g.hidden == 0) g.hidden = tower->hidden;
  const int64_t width = tower->hidden;
  AppendSection(g, std::move(tower).value(), {section, label});
  return width;
}

Node Projection(const std::string& module, int64_t in, int64_t out, int section) {
  Node n = encoder::HeadNode(
      module, "projection " + std::to_string(in) + " -> " + std::to_string(out) + " (no bias)", in,
      out);
  AddLinear(n, "", in, out, false);
  n.section = section;
  return n;
}

void BuildDualEncoder(const DualEncoder& f, ConfigReader& config, ModelGraph& g) {
  g.family = f.family;
  MarkTower(g);
  const int64_t text_hidden = AppendTower(config, g, "text_config", f.text_type, "text tower");
  if (!text_hidden) return;
  const int64_t vision_hidden =
      AppendTower(config, g, "vision_config", f.vision_type, "vision tower");
  if (!vision_hidden) return;
  // The logit scale (and SigLIP's bias) belong to neither tower; they are counted with the text
  // tower's section, the first.
  Node logit = encoder::HeadNode("", "contrastive logit scale", 1, 1);
  if (f.projections) {
    const int64_t proj = config.Positive({"projection_dim"}, kMaxWidth, 512,
                                         "projection_dim absent: CLIPConfig's default 512");
    g.final_nodes.push_back(Projection("text_projection", text_hidden, proj, 0));
    g.final_nodes.push_back(Projection("visual_projection", vision_hidden, proj, 1));
    logit.tensors.push_back({.name = "logit_scale", .shape = {}});
  } else {
    logit.label = "sigmoid logit scale and bias";
    logit.tensors.push_back({.name = "logit_scale", .shape = {1}});
    logit.tensors.push_back({.name = "logit_bias", .shape = {1}});
  }
  g.final_nodes.push_back(std::move(logit));
}

}  // namespace

void RegisterVisionTowers(ArchRegistry& registry) {
  for (const ClipLike& f : kClipLike) {
    registry.Add(f.model_type, [&f](ConfigReader& config, ModelGraph& graph) {
      BuildClipLike(f, config, graph);
    });
  }
  for (const DualEncoder& f : kDualEncoders) {
    registry.Add(f.model_type, [&f](ConfigReader& config, ModelGraph& graph) {
      BuildDualEncoder(f, config, graph);
    });
  }
  RegisterVitTowers(registry);
}

}  // namespace hubwatch
