// Qwen2-VL and Qwen2.5-VL (Qwen2VLForConditionalGeneration, Qwen2_5_VLForConditionalGeneration):
// a ViT over 3-D patches ("visual": a bias-free Conv3d patch embedding, blocks of fused-qkv
// attention and an MLP, 2-D rotary positions with no parameters), a patch merger that
// concatenates spatial_merge_size^2 neighbouring patches and projects them to the text width
// ("visual.merger": ln_q, mlp.0, GELU, mlp.2), then the Qwen2 decoder ("model.layers", lm_head).
// The two differ in the rows of kQwenVl below: Qwen2-VL's tower uses LayerNorm and a fc1/fc2
// MLP of embed_dim * mlp_ratio; Qwen2.5-VL's RMSNorm and a biased SwiGLU MLP of
// intermediate_size, with windowed attention (no parameters) in most blocks.
//
// Names are those the released checkpoints store ("visual.blocks.0.attn.qkv.weight",
// "model.embed_tokens.weight"); transformers >= 4.52 loads them as model.visual and
// model.language_model. Vision keys live in vision_config; the text keys at the top level
// (older configs) or in text_config (newer ones).

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/vl_composite.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

struct QwenVl {
  std::string_view model_type = {};
  std::string_view family = {};
  bool swiglu = false;               // Qwen2_5_VLMLP (gate/up/down) instead of VisionMlp (fc1/fc2)
  NormKind norm = NormKind::kLayer;  // norm1, norm2 and the merger's ln_q
  const char* width_key = nullptr;   // the tower's width
  const char* out_key = nullptr;     // the merger's output width (the text hidden size)
  const char* activation = nullptr;  // hidden_act default of the vision config class
};

const QwenVl kQwenVl[] = {
    {.model_type = "qwen2_vl",
     .family = "Qwen2-VL: ViT over 3-D patches (LayerNorm, fused qkv, quick-GELU MLP, 2-D "
               "RoPE), 2x2 patch merger, Qwen2 decoder with multimodal RoPE",
     .width_key = "embed_dim",
     .out_key = "hidden_size",
     .activation = "quick_gelu"},
    {.model_type = "qwen2_5_vl",
     .family = "Qwen2.5-VL: ViT over 3-D patches (RMSNorm, fused qkv, SwiGLU MLP, windowed "
               "attention with a few full-attention blocks), 2x2 patch merger, Qwen2 decoder "
               "with multimodal RoPE",
     .swiglu = true,
     .norm = NormKind::kRms,
     .width_key = "hidden_size",
     .out_key = "out_hidden_size",
     .activation = "silu"},
};

// Qwen2VLVisionConfig / Qwen2_5_VLVisionConfig defaults (the 7B towers).
constexpr int64_t kDepth = 32, kWidth = 1280, kHeads = 16, kPatch = 14, kTemporal = 2, kMerge = 2,
                  kChannels = 3, kMlpRatio = 4, kIntermediate = 3420, kOut = 3584;

Node VisionMlp(const QwenVl& f, ConfigReader& v, int64_t width) {
  const std::string act = v.String({"hidden_act"}, f.activation);
  if (f.swiglu) {
    const int64_t inter = v.Positive({"intermediate_size"}, kMaxWidth, kIntermediate,
                                     "intermediate_size absent: 3420");
    Node n = MlpNode("visual.blocks.{i}.mlp", width, {inter, true, act});
    AddLinear(n, "gate_proj", width, inter, true);
    AddLinear(n, "up_proj", width, inter, true);
    AddLinear(n, "down_proj", inter, width, true);
    return n;
  }
  const int64_t inter = width * v.Positive({"mlp_ratio"}, 64, kMlpRatio, "mlp_ratio absent: 4");
  return multimodal::VisionFcMlp("visual.blocks.{i}.mlp", "", width, inter, act);
}

// The tower: patch_embed, rotary_pos_emb (a buffer transformers does not save) and the blocks.
ModelGraph VisionTower(const QwenVl& f, ConfigReader& v, int64_t width) {
  const int64_t depth = v.Positive({"depth"}, kMaxLayers, kDepth, "depth absent: 32");
  const int64_t heads = v.Positive({"num_heads"}, kMaxHeads, kHeads, "num_heads absent: 16");
  const int64_t channels = v.Positive({"in_channels", "in_chans"}, 64, kChannels);
  const int64_t patch =
      v.Positive({"patch_size", "spatial_patch_size"}, 1024, kPatch, "patch_size absent: 14");
  const int64_t temporal =
      v.Positive({"temporal_patch_size"}, 64, kTemporal, "temporal_patch_size absent: 2");
  if (width % heads != 0) v.Fail("the vision width is not divisible by num_heads");
  const int64_t head_dim = width / heads;

  ModelGraph t;
  Node embed;
  embed.kind = NodeKind::kEmbedding;
  embed.module = "visual.patch_embed";
  embed.label = "Conv3d patch embedding, " + std::to_string(temporal) + "x" +
                std::to_string(patch) + "x" + std::to_string(patch) + " patches";
  embed.output_width = width;
  AddTensor(embed, "proj.weight", {width, channels, temporal, patch, patch});
  t.embeddings.push_back(std::move(embed));
  Node rope;
  rope.kind = NodeKind::kPositionEmbedding;
  rope.module = "visual.rotary_pos_emb";
  rope.label = "2-D rotary positions (no parameters)";
  rope.output_width = width;
  AddTensor(rope, "inv_freq", {head_dim / 4}, TensorRole::kBuffer).stored = false;
  t.embeddings.push_back(std::move(rope));

  Node attn = multimodal::VisionAttention("visual.blocks.{i}.attn", width, heads, head_dim);
  AddLinear(attn, "qkv", width, 3 * width, true);
  AddLinear(attn, "proj", width, width, true);
  const bool bias = f.norm == NormKind::kLayer;
  BlockTemplate b;
  b.label = std::string(f.model_type) + " vision block";
  b.nodes = NodeList(Norm("visual.blocks.{i}.norm1", width, f.norm, bias), std::move(attn),
                     Norm("visual.blocks.{i}.norm2", width, f.norm, bias), VisionMlp(f, v, width));
  t.blocks.push_back(std::move(b));
  UniformLayers(t, depth);
  return t;
}

// PatchMerger: ln_q over each patch, then an MLP over spatial_merge_size^2 patches concatenated.
ModelGraph Merger(const QwenVl& f, ConfigReader& v, int64_t width, int64_t out) {
  const int64_t merge =
      v.Positive({"spatial_merge_size"}, 16, kMerge, "spatial_merge_size absent: 2");
  const int64_t merged = width * merge * merge;
  ModelGraph m;
  m.embeddings.push_back(Norm("visual.merger.ln_q", width, f.norm, f.norm == NormKind::kLayer));
  Node mlp = MlpNode("visual.merger.mlp", out, {merged, false, "gelu"});
  mlp.label = "patch merger MLP (gelu) over " + std::to_string(merge * merge) + " patches, " +
              std::to_string(merged) + " -> " + std::to_string(out);
  mlp.input_width = merged;
  AddLinear(mlp, "0", merged, merged, true);
  AddLinear(mlp, "2", merged, out, true);
  m.embeddings.push_back(std::move(mlp));
  return m;
}

// The text keys: text_config when present (with the composite's tie_word_embeddings when it
// does not repeat it), else config.json itself without its vision_config.
nlohmann::json TextConfig(const nlohmann::json& config) {
  if (auto it = config.find("text_config"); it != config.end() && it->is_object()) {
    nlohmann::json text = *it;
    if (!text.contains("tie_word_embeddings") && config.contains("tie_word_embeddings")) {
      text["tie_word_embeddings"] = config["tie_word_embeddings"];
    }
    return text;
  }
  nlohmann::json text = config;
  text.erase("vision_config");
  return text;
}

void BuildQwenVl(const QwenVl& f, ConfigReader& config, ModelGraph& g) {
  const nlohmann::json* vision = multimodal::SubConfig(config, "vision_config");
  if (!vision) return;
  ConfigReader v(*vision, config.depth() + 1);
  const int64_t width =
      v.Positive({f.width_key}, kMaxWidth, kWidth, std::string(f.width_key) + " absent: 1280");
  const int64_t out =
      v.Positive({f.out_key}, kMaxWidth, kOut, std::string(f.out_key) + " absent: 3584");
  ModelGraph tower = VisionTower(f, v, width);
  ModelGraph merger = Merger(f, v, width, out);
  multimodal::Forward(v, config, "vision_config");
  if (!config.ok()) return;
  g.family = f.family;
  const std::string layers = std::to_string(tower.layers.size());
  AppendSection(g, std::move(tower), {"vision tower", "ViT, " + layers + " blocks"});
  AppendSection(g, std::move(merger), {"projector", "patch merger"});
  const nlohmann::json text = TextConfig(config.json());
  multimodal::AppendLanguageModel(config, g, text, "language model", "qwen2", "");
  if (config.ok() && g.hidden != out) {
    config.Fail("vision_config." + std::string(f.out_key) + " (" + std::to_string(out) +
                ") differs from the text hidden_size (" + std::to_string(g.hidden) + ")");
  }
}

}  // namespace

void RegisterQwenVl(ArchRegistry& registry) {
  for (const QwenVl& f : kQwenVl) {
    registry.Add(f.model_type,
                 [&f](ConfigReader& config, ModelGraph& graph) { BuildQwenVl(f, config, graph); });
  }
}

}  // namespace hubwatch
