// Image towers (arch_vision*.cc): exact counts against tests/fixtures/models/truth-encoders.json
// for clip, siglip, vit and dinov2, the tensors under their checkpoint names and shapes, the
// towers reached through their own model_types, and configs that must fail.

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/checkpoint.h"
#include "estimator/kv_cache.h"
#include "tests/estimator/composite_test_util.h"

namespace hubwatch {
namespace {

using testing::BuildOk;
using testing::BuildRepo;
using testing::CountsOk;
using testing::ExpectShape;
using testing::HeaderOf;
using testing::ModelConfigPath;
using testing::ReadJsonFixture;
using testing::TensorsByName;

// A tower reads its input at once: nothing cached, no logits, nothing decoded.
void ExpectTower(const ModelGraph& g) {
  EXPECT_FALSE(g.decodes);
  EXPECT_FALSE(g.vocab_logits);
  for (const BlockTemplate& b : g.blocks) {
    for (const Node& n : b.nodes) {
      if (n.kind == NodeKind::kAttention) {
        EXPECT_EQ(n.attention.caching, KvCaching::kNone);
      }
    }
  }
  const KvCache kv = ComputeKvCache(g, 1024, 2);
  EXPECT_EQ(kv.bytes_per_sequence, 0);
  EXPECT_EQ(kv.cached_attention_layers, 0);
}

TEST(Vision, ExactParameterCountsFromTruth) {
  const std::set<std::string> towers = {"clip", "siglip", "vit", "dinov2"};
  const nlohmann::json truth = ReadJsonFixture("models/truth-encoders.json");
  int checked = 0;
  for (auto it = truth.begin(); it != truth.end(); ++it) {
    if (it.key().front() == '_' || !towers.count(it->value("model_type", ""))) continue;
    SCOPED_TRACE(it.key());
    const ModelGraph g = BuildRepo(it.key());
    EXPECT_EQ(g.model_type, it->at("model_type").get<std::string>());
    const ParamCounts c = CountsOk(g);
    EXPECT_EQ(c.total, it->at("params").get<uint64_t>());
    EXPECT_EQ(c.active, c.total);
    EXPECT_EQ(c.embedding + c.attention + c.mlp + c.norm + c.head + c.other, c.total);
    if (!c.by_section.empty()) {
      EXPECT_EQ(std::accumulate(c.by_section.begin(), c.by_section.end(), uint64_t{0}), c.total);
    }
    ExpectTower(g);
    testing::ExpectMatchesItsCheckpoint(g);
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// CLIPModel: text and vision towers as two sections; the class token, pre_layrnorm (sic),
// the bias-free projections and the 0-d logit_scale; position_ids are buffers (truth notes).
TEST(Vision, ClipIsTwoTowersWithProjections) {
  const ModelGraph g = BuildRepo("openai/clip-vit-base-patch32");
  ASSERT_EQ(g.sections.size(), 2u);
  EXPECT_EQ(g.sections[0].name, "text tower");
  EXPECT_EQ(g.sections[1].name, "vision tower");
  const auto t = TensorsByName(g);
  ExpectShape(t, "vision_model.embeddings.patch_embedding.weight", {768, 3, 32, 32});
  EXPECT_EQ(t.count("vision_model.embeddings.patch_embedding.bias"), 0u);
  ExpectShape(t, "vision_model.embeddings.class_embedding", {768});
  ExpectShape(t, "vision_model.embeddings.position_embedding.weight", {50, 768});
  ExpectShape(t, "vision_model.pre_layrnorm.weight", {768});
  ExpectShape(t, "vision_model.encoder.layers.11.self_attn.out_proj.weight", {768, 768});
  ExpectShape(t, "vision_model.encoder.layers.11.mlp.fc1.weight", {3072, 768});
  ExpectShape(t, "vision_model.post_layernorm.bias", {768});
  ExpectShape(t, "text_model.embeddings.token_embedding.weight", {49408, 512});
  ExpectShape(t, "text_model.embeddings.position_embedding.weight", {77, 512});
  ExpectShape(t, "text_model.final_layer_norm.weight", {512});
  ExpectShape(t, "text_projection.weight", {512, 512});
  ExpectShape(t, "visual_projection.weight", {512, 768});
  ExpectShape(t, "logit_scale", {});
  EXPECT_EQ(t.count("text_projection.bias"), 0u);
  EXPECT_EQ(t.at("text_model.embeddings.position_ids").role, TensorRole::kBuffer);
  EXPECT_EQ(t.at("vision_model.embeddings.position_ids").shape, (std::vector<int64_t>{1, 50}));
  // n_embedding_parameters 25296896 = 49408 x 512 (truth notes): the text token table.
  EXPECT_EQ(49408u * 512u, 25296896u);
}

// CLIPVisionModel alone (what LLaVA composes): the CLIP vision section without its projection.
TEST(Vision, ClipVisionModelIsTheVisionSection) {
  const nlohmann::json clip = ReadJsonFixture(ModelConfigPath("openai/clip-vit-base-patch32"));
  const ModelGraph dual = BuildOk(clip);
  nlohmann::json config = clip.at("vision_config");
  config["architectures"] = {"CLIPVisionModel"};
  const ModelGraph tower = BuildOk(config);
  ExpectTower(tower);
  EXPECT_TRUE(tower.sections.empty());
  EXPECT_EQ(CountsOk(tower).total, CountsOk(dual).by_section.at(1) - 768u * 512u);
  EXPECT_EQ(TensorsByName(tower).count("vision_model.embeddings.class_embedding"), 1u);
}

// SiglipModel: no class token, biased patch conv, the vision MAP head and the text head, logit
// scale and bias of shape [1] (truth notes: 203155970 includes them).
TEST(Vision, SiglipHasPoolingHeadAndSigmoidBias) {
  const ModelGraph g = BuildRepo("google/siglip-base-patch16-224");
  const auto t = TensorsByName(g);
  ExpectShape(t, "vision_model.embeddings.patch_embedding.weight", {768, 3, 16, 16});
  ExpectShape(t, "vision_model.embeddings.patch_embedding.bias", {768});
  ExpectShape(t, "vision_model.embeddings.position_embedding.weight", {196, 768});
  EXPECT_EQ(t.count("vision_model.embeddings.class_embedding"), 0u);
  ExpectShape(t, "vision_model.head.probe", {1, 1, 768});
  ExpectShape(t, "vision_model.head.attention.in_proj_weight", {2304, 768});
  ExpectShape(t, "vision_model.head.mlp.fc2.weight", {768, 3072});
  ExpectShape(t, "text_model.embeddings.position_embedding.weight", {64, 768});
  ExpectShape(t, "text_model.head.weight", {768, 768});
  ExpectShape(t, "logit_scale", {1});
  ExpectShape(t, "logit_bias", {1});
  // n_embedding_parameters 24576000 = 32000 x 768 (truth notes).
  ExpectShape(t, "text_model.embeddings.token_embedding.weight", {32000, 768});
}

// ViTModel: class token, 197 positions, pooler; a checkpoint of the bare model has no "vit."
// prefix and still matches.
TEST(Vision, VitNamesAndABareModelCheckpoint) {
  const ModelGraph g = BuildRepo("google/vit-base-patch16-224-in21k");
  const auto t = TensorsByName(g);
  ExpectShape(t, "vit.embeddings.cls_token", {1, 1, 768});
  ExpectShape(t, "vit.embeddings.position_embeddings", {1, 197, 768});
  ExpectShape(t, "vit.embeddings.patch_embeddings.projection.weight", {768, 3, 16, 16});
  ExpectShape(t, "vit.encoder.layer.11.attention.attention.query.bias", {768});
  ExpectShape(t, "vit.encoder.layer.11.intermediate.dense.weight", {3072, 768});
  ExpectShape(t, "vit.encoder.layer.11.layernorm_after.weight", {768});
  ExpectShape(t, "vit.pooler.dense.weight", {768, 768});
  SafetensorsHeader bare = HeaderOf(g);
  SafetensorsHeader stripped = bare;
  stripped.tensors.clear();
  for (const auto& [name, tensor] : bare.tensors) stripped.tensors.emplace(name.substr(4), tensor);
  Result<CheckpointComparison> cmp = CompareWithCheckpoint(g, CountsOk(g), {stripped});
  ASSERT_TRUE(cmp.ok());
  EXPECT_TRUE(cmp->prefix_stripped);
  EXPECT_EQ(cmp->parameter_delta, 0);
  EXPECT_TRUE(cmp->unexpected.empty());
}

// Dinov2Model: mask token, 1 + 37 x 37 positions (518 / 14), layer scale twice per layer, no
// pooler (truth notes).
TEST(Vision, Dinov2HasMaskTokenAndLayerScale) {
  const ModelGraph g = BuildRepo("facebook/dinov2-small");
  const auto t = TensorsByName(g);
  ExpectShape(t, "dinov2.embeddings.mask_token", {1, 384});
  ExpectShape(t, "dinov2.embeddings.position_embeddings", {1, 1370, 384});
  ExpectShape(t, "dinov2.embeddings.patch_embeddings.projection.weight", {384, 3, 14, 14});
  ExpectShape(t, "dinov2.encoder.layer.0.layer_scale1.lambda1", {384});
  ExpectShape(t, "dinov2.encoder.layer.0.layer_scale2.lambda1", {384});
  ExpectShape(t, "dinov2.encoder.layer.0.mlp.fc1.weight", {1536, 384});
  ExpectShape(t, "dinov2.encoder.layer.0.norm1.weight", {384});
  ExpectShape(t, "dinov2.layernorm.weight", {384});
  EXPECT_EQ(t.count("dinov2.pooler.dense.weight"), 0u);
}

// Hostile towers fail with one line instead of allocating.
TEST(Vision, HugeOrImpossibleTowersFail) {
  const nlohmann::json clip = ReadJsonFixture(ModelConfigPath("openai/clip-vit-base-patch32"));
  testing::ExpectHugePartFails("openai/clip-vit-base-patch32", "vision_config");
  testing::ExpectHugePartFails("google/siglip-base-patch16-224", "text_config");

  nlohmann::json vit = ReadJsonFixture(ModelConfigPath("google/vit-base-patch16-224-in21k"));
  vit["patch_size"] = 448;
  EXPECT_FALSE(BuildModelGraph(vit).ok());
  vit["patch_size"] = 1;
  vit["image_size"] = 1 << 20;  // 2^40 patches
  EXPECT_FALSE(BuildModelGraph(vit).ok());
  nlohmann::json nested = clip;
  nested["vision_config"] = "not an object";
  EXPECT_FALSE(BuildModelGraph(nested).ok());
}

}  // namespace
}  // namespace hubwatch
