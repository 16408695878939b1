// Multimodal wrappers (arch_multimodal*.cc): exact counts against the truth files (llava and
// paligemma in truth-multimodal-ssm.json, mistral3 in truth-decoders-a.json, gemma3 in
// truth-vision.json), the three sections with the split the truth notes derive, checkpoint names
// and shapes, and the memory marks: only the decoder caches K/V and makes logits.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/estimate.h"
#include "estimator/kv_cache.h"
#include "tests/estimator/composite_test_util.h"

namespace hubwatch {
namespace {

using testing::BuildOk;
using testing::BuildRepo;
using testing::CountsOk;
using testing::ExpectShape;
using testing::ModelConfigPath;
using testing::ReadJsonFixture;
using testing::TensorsByName;

// Sections "vision tower", "projector", "language model"; the tower caches nothing, the decoder
// caches every layer it has (or its window), and the whole decodes with vocabulary logits.
void ExpectComposite(const ModelGraph& g, size_t text_layers) {
  ASSERT_EQ(g.sections.size(), 3u);
  EXPECT_EQ(g.sections[0].name, "vision tower");
  EXPECT_EQ(g.sections[1].name, "projector");
  EXPECT_EQ(g.sections[2].name, "language model");
  EXPECT_TRUE(g.decodes);
  EXPECT_TRUE(g.vocab_logits);
  for (const BlockTemplate& b : g.blocks) {
    for (const Node& n : b.nodes) {
      if (n.kind != NodeKind::kAttention) continue;
      EXPECT_EQ(n.attention.caching, n.section == 0 ? KvCaching::kNone : KvCaching::kSelf)
          << n.module;
    }
  }
  EXPECT_EQ(ComputeKvCache(g, 1024, 2).cached_attention_layers, text_layers);
  bool noted = false;
  for (const std::string& note : g.notes) noted |= note.starts_with("memory: image tokens");
  EXPECT_TRUE(noted);
}

TEST(Multimodal, ExactParameterCountsFromTruth) {
  const std::set<std::string> types = {"llava", "paligemma", "mistral3", "gemma3"};
  std::set<std::string> seen;
  for (const char* file : {"models/truth-multimodal-ssm.json", "models/truth-decoders-a.json",
                           "models/truth-vision.json"}) {
    const nlohmann::json truth = ReadJsonFixture(file);
    for (auto it = truth.begin(); it != truth.end(); ++it) {
      if (it.key().front() == '_' || !types.count(it->value("model_type", "")) ||
          !it->contains("params")) {
        continue;
      }
      SCOPED_TRACE(it.key());
      const ModelGraph g = BuildRepo(it.key());
      const ParamCounts c = CountsOk(g);
      EXPECT_EQ(c.total, it->at("params").get<uint64_t>());
      EXPECT_EQ(c.active, c.total);
      ASSERT_EQ(c.by_section.size(), 3u);
      EXPECT_EQ(c.by_section[0] + c.by_section[1] + c.by_section[2], c.total);
      testing::ExpectMatchesItsCheckpoint(g);
      seen.insert(g.model_type);
    }
  }
  EXPECT_EQ(seen, types);
}

// llava-1.5-7b-hf: CLIP ViT-L/14-336 (24 layers, 577 positions), a 1024 -> 4096 -> 4096 MLP
// projector, vicuna-7b with LlamaConfig defaults for what text_config leaves out (truth notes).
// Split by arithmetic: Llama-2-7B 6738415616 + 64 more rows in embedding and head (2 x 64 x
// 4096) = 6738939904; projector 1024x4096 + 4096 + 4096x4096 + 4096 = 20979712; the tower is the
// rest, 303507456.
TEST(Multimodal, LlavaNamesSectionsAndDefaults) {
  const ModelGraph g = BuildRepo("edbeeching/vsft-llava-1.5-7b-hf");
  ExpectComposite(g, 32);
  EXPECT_EQ(CountsOk(g).by_section, (std::vector<uint64_t>{303507456, 20979712, 6738939904}));
  EXPECT_FALSE(g.tied);
  EXPECT_EQ(g.vocab, 32064);
  const auto s = TensorsByName(g);
  ExpectShape(s, "vision_tower.vision_model.embeddings.position_embedding.weight", {577, 1024});
  ExpectShape(s, "vision_tower.vision_model.embeddings.patch_embedding.weight", {1024, 3, 14, 14});
  ExpectShape(s, "vision_tower.vision_model.encoder.layers.23.mlp.fc1.weight", {4096, 1024});
  ExpectShape(s, "vision_tower.vision_model.post_layernorm.weight", {1024});
  ExpectShape(s, "multi_modal_projector.linear_1.weight", {4096, 1024});
  ExpectShape(s, "multi_modal_projector.linear_2.bias", {4096});
  ExpectShape(s, "language_model.model.embed_tokens.weight", {32064, 4096});
  ExpectShape(s, "language_model.model.layers.31.mlp.gate_proj.weight", {11008, 4096});
  ExpectShape(s, "language_model.lm_head.weight", {32064, 4096});
  bool noted = false;
  for (const std::string& n : g.notes)
    noted |= n.find("hidden_size absent: LlamaConfig") != std::string::npos;
  EXPECT_TRUE(noted);
}

// PaliGemma-3B-224: the printed model tree's split (truth): tower 412,442,352, projector
// 2,361,344, Gemma 2,508,662,784 with the tied head counted once; no SigLIP head.
TEST(Multimodal, PaliGemmaSplitAndTiedHead) {
  const ModelGraph g = BuildRepo("hyacinthum/paligemma_vqav2");
  ExpectComposite(g, 18);
  EXPECT_EQ(CountsOk(g).by_section, (std::vector<uint64_t>{412442352, 2361344, 2508662784}));
  EXPECT_TRUE(g.tied);
  const auto s = TensorsByName(g);
  ExpectShape(s, "vision_tower.vision_model.embeddings.position_embedding.weight", {256, 1152});
  ExpectShape(s, "multi_modal_projector.linear.weight", {2048, 1152});
  ExpectShape(s, "language_model.model.embed_tokens.weight", {257216, 2048});
  ExpectShape(s, "language_model.model.layers.17.self_attn.k_proj.weight", {256, 2048});
  EXPECT_EQ(s.count("vision_tower.vision_model.head.probe"), 0u);
  EXPECT_EQ(s.count("language_model.lm_head.weight"), 0u);
}

// Mistral-Small-3.1: the truth notes' split: Pixtral 403,305,472, projector 35,652,608 (norm,
// patch merger 4096 -> 1024, linear_1, linear_2, no biases), Mistral text 23,572,403,200.
TEST(Multimodal, Mistral3PixtralAndPatchMerger) {
  const ModelGraph g = BuildRepo("mistralai/Mistral-Small-3.1-24B-Instruct-2503");
  ExpectComposite(g, 40);
  EXPECT_EQ(CountsOk(g).by_section, (std::vector<uint64_t>{403305472, 35652608, 23572403200}));
  const auto s = TensorsByName(g);
  ExpectShape(s, "vision_tower.patch_conv.weight", {1024, 3, 14, 14});
  ExpectShape(s, "vision_tower.ln_pre.weight", {1024});
  ExpectShape(s, "vision_tower.transformer.layers.23.feed_forward.gate_proj.weight", {4096, 1024});
  ExpectShape(s, "vision_tower.transformer.layers.23.attention.o_proj.weight", {1024, 1024});
  ExpectShape(s, "multi_modal_projector.norm.weight", {1024});
  ExpectShape(s, "multi_modal_projector.patch_merger.merging_layer.weight", {1024, 4096});
  ExpectShape(s, "multi_modal_projector.linear_1.weight", {5120, 1024});
  ExpectShape(s, "language_model.model.layers.39.self_attn.q_proj.weight", {4096, 5120});
  EXPECT_EQ(s.count("multi_modal_projector.linear_1.bias"), 0u);
}

// Gemma-3-4B: SigLIP at 896 px (64 x 64 = 4096 positions), the projection matrix and its norm,
// Gemma-3 text with Gemma3TextConfig's vocabulary 262208, 5 sliding : 1 global layers.
// Split by arithmetic (truth-vision.json notes): 416,866,032 + 2,950,272 + 3,880,263,168.
TEST(Multimodal, Gemma3ProjectionAndSlidingText) {
  const ModelGraph g = BuildRepo("mlx-community/gemma-3-4b-it-bf16");
  ExpectComposite(g, 34);
  EXPECT_EQ(CountsOk(g).by_section, (std::vector<uint64_t>{416866032, 2950272, 3880263168}));
  EXPECT_TRUE(g.tied);
  const auto s = TensorsByName(g);
  ExpectShape(s, "vision_tower.vision_model.embeddings.position_embedding.weight", {4096, 1152});
  ExpectShape(s, "multi_modal_projector.mm_input_projection_weight", {1152, 2560});
  ExpectShape(s, "multi_modal_projector.mm_soft_emb_norm.weight", {1152});
  ExpectShape(s, "language_model.model.embed_tokens.weight", {262208, 2560});
  ExpectShape(s, "language_model.model.layers.33.self_attn.q_norm.weight", {256});
  size_t sliding = 0;
  for (const LayerSpec& l : g.layers) sliding += l.window == 1024;
  EXPECT_EQ(sliding, 34u - 5u);  // layers 6, 12, ..., 30 are global
}

// Idefics3 nests tower and decoder under "model." and keeps lm_head at the root; the connector
// reads scale_factor^2 patches. No released config is a fixture here, so this is structure only:
// a tiny hand-made config (not a model) exercises the names and widths.
TEST(Multimodal, Idefics3NamesStructureOnly) {
  const nlohmann::json config = nlohmann::json::parse(R"({
    "architectures": ["Idefics3ForConditionalGeneration"], "model_type": "idefics3",
    "scale_factor": 4, "torch_dtype": "bfloat16",
    "text_config": {"model_type": "llama", "vocab_size": 1000, "hidden_size": 64,
                    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                    "num_key_value_heads": 2, "tie_word_embeddings": false},
    "vision_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 3,
                      "num_attention_heads": 2, "image_size": 64, "patch_size": 16}})");
  const ModelGraph g = BuildOk(config);
  ExpectComposite(g, 2);
  const auto s = TensorsByName(g);
  ExpectShape(s, "model.vision_model.embeddings.patch_embedding.weight", {32, 3, 16, 16});
  ExpectShape(s, "model.vision_model.embeddings.position_embedding.weight", {16, 32});
  ExpectShape(s, "model.vision_model.encoder.layers.2.self_attn.q_proj.weight", {32, 32});
  ExpectShape(s, "model.vision_model.post_layernorm.weight", {32});
  ExpectShape(s, "model.connector.modality_projection.proj.weight", {64, 32 * 16});
  ExpectShape(s, "model.text_model.layers.1.self_attn.k_proj.weight", {32, 64});
  ExpectShape(s, "model.text_model.norm.weight", {64});
  ExpectShape(s, "lm_head.weight", {1000, 64});
}

// Bad sub-configs fail with one line naming the part, without building anything huge.
TEST(Multimodal, HugeOrBrokenPartsFail) {
  const nlohmann::json llava = ReadJsonFixture(ModelConfigPath("edbeeching/vsft-llava-1.5-7b-hf"));
  testing::ExpectHugePartFails("edbeeching/vsft-llava-1.5-7b-hf", "text_config");
  testing::ExpectHugePartFails("mistralai/Mistral-Small-3.1-24B-Instruct-2503", "vision_config");

  nlohmann::json unknown = llava;
  unknown["vision_config"]["model_type"] = "no_such_tower";
  Result<ModelGraph> g = BuildModelGraph(unknown);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("no_such_tower"), std::string::npos);

  nlohmann::json layers = llava;
  layers["vision_feature_layer"] = nlohmann::json::array();
  EXPECT_FALSE(BuildModelGraph(layers).ok());
}

// The whole estimate of every tower and wrapper with its own checkpoint: nothing to lint, plans
// that are finite and positive, a KV cache to serve only where a decoder is.
TEST(Multimodal, EstimateEveryTowerAndWrapperWithItsCheckpoint) {
  for (const char* repo :
       {"openai/clip-vit-base-patch32", "google/siglip-base-patch16-224",
        "google/vit-base-patch16-224-in21k", "facebook/dinov2-small",
        "edbeeching/vsft-llava-1.5-7b-hf", "hyacinthum/paligemma_vqav2",
        "mistralai/Mistral-Small-3.1-24B-Instruct-2503", "mlx-community/gemma-3-4b-it-bf16"}) {
    SCOPED_TRACE(repo);
    const nlohmann::json config = ReadJsonFixture(ModelConfigPath(repo));
    EstimateInput in;
    in.headers = {testing::HeaderOf(BuildOk(config))};
    Result<Estimate> e = EstimateModel(config, in);
    ASSERT_TRUE(e.ok()) << e.error().message;
    for (const Lint& l : e->lints) EXPECT_NE(l.severity, LintSeverity::kError) << l.message;
    EXPECT_EQ(e->kv.bytes_per_token > 0, e->graph.decodes);
    ASSERT_FALSE(e->memory.empty());
    for (const MemoryPlan& p : e->memory) {
      EXPECT_GT(p.fixed_bytes, 0) << ModeName(p.mode);
      EXPECT_GT(p.per_sample_bytes, 0) << ModeName(p.mode);
      EXPECT_LT(p.fixed_bytes, 1e15) << ModeName(p.mode);
    }
  }
}

}  // namespace
}  // namespace hubwatch
