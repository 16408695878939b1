#pragma once

// The parts every image tower (arch_vision*.cc) and every multimodal wrapper that composes one
// (arch_multimodal*.cc) shares: the patch embedding, the ViT geometry read from a vision config,
// the CLIP-style encoder layer, and the graph marks of a tower. Internal to the estimator.
//
// A tower is reached through the registry like any other part: BuildPart(config, vision_config,
// "vision_config", "clip_vision_model") builds CLIP's tower under "vision_model.", SigLIP's
// ("siglip_vision_model") likewise, Pixtral's ("pixtral") at its root; the caller prefixes its
// attribute name ("vision_tower.").

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch {
class ArchRegistry;
// vit, dinov2, pixtral (arch_vision_vit.cc); RegisterVisionTowers calls it.
void RegisterVitTowers(ArchRegistry& registry);
}  // namespace hubwatch

namespace hubwatch::vision {

// Width and depth of a transformer tower, as its config class defaults them.
struct TowerDefaults {
  std::string_view config_class;  // "CLIPVisionConfig": names the defaults in notes
  int64_t hidden, intermediate, layers, heads;
  int64_t image_size = 0, patch_size = 0;  // vision towers only
  const char* activation = "gelu";
  int64_t vocab = 0, max_positions = 0;  // text towers only
};

// What a tower's config says (or its class defaults): widths, depth, and for a vision tower its
// patch grid; intermediate_size only where the defaults give one (DINOv2 derives it). Reads fail
// through config.Fail: a patch larger than the image, or a grid of more than kMaxPositions patches.
struct TowerDims {
  int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, head_dim = 0;
  int64_t channels = 3, image_size = 0, patch_size = 0;
  int64_t patches = 0;  // (image_size / patch_size)^2
  std::string activation;
};
// A positive integer read from `keys`, else `fallback`, noted as the config class's default.
int64_t ReadDefault(ConfigReader& config, Keys keys, int64_t max, int64_t fallback,
                    std::string_view what, std::string_view config_class);
TowerDims ReadTowerDims(ConfigReader& config, const TowerDefaults& d, bool vision);

// The patch embedding: a Conv2d "<module>.<name>.weight" [hidden, channels, patch, patch]
// (+ ".bias"). Its linear_in/out are channels * patch^2 -> hidden (a Linear on flattened patches).
Node PatchEmbedding(const std::string& module, const std::string& name, const TowerDims& d,
                    bool bias);

// A tower reads its whole input in one forward pass: it decodes nothing and has no LM head.
void MarkTower(ModelGraph& g);

// Bidirectional attention over a tower's width (KvCaching::kNone) under `module`, with one
// hidden x hidden Linear per name in `projections` ("q_proj", ...), biased or not.
Node TowerAttention(const std::string& module, const TowerDims& d,
                    std::initializer_list<const char*> projections, bool bias);

// The CLIP encoder layer (CLIPEncoderLayer; SigLIP's and Idefics3's are the same): layer_norm1,
// self_attn.{q,k,v,out}_proj (biased), layer_norm2, mlp.fc1/fc2, under `layer`
// ("vision_model.encoder.layers.{i}").
BlockTemplate ClipEncoderLayer(const std::string& layer, const TowerDims& d, std::string label);

// "ViT, 12 layers, hidden 768, 16x16 patches of 224x224"
std::string TowerLabel(std::string_view what, const TowerDims& d);

}  // namespace hubwatch::vision
