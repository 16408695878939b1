// Qwen2-VL and Qwen2.5-VL (arch_qwen_vl.cc): exact counts against
// tests/fixtures/models/truth-multimodal-ssm.json, checkpoint names and shapes of each part, and
// the caching of each part's attention.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/checkpoint_graph.h"
#include "estimator/estimate.h"
#include "estimator/kv_cache.h"
#include "tests/estimator/composite_test_util.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::BuildOk;
using testing::CountsOk;
using testing::HeaderOf;
using testing::ModelConfigPath;
using testing::ReadJsonFixture;
using testing::StoredShapes;

nlohmann::json Config(const std::string& repo) { return ReadJsonFixture(ModelConfigPath(repo)); }

uint64_t TruthParams(const std::string& repo) {
  const nlohmann::json truth = ReadJsonFixture("models/truth-multimodal-ssm.json");
  return truth.at(repo).at("params").get<uint64_t>();
}

// Qwen2-VL-2B (EraX-VL-2B-V1.5 has its shapes): vision tower 665,271,296 (patch_embed
// 1,505,280 + 32 blocks of 19,677,440 + merger 34,087,936) and the Qwen2-1.5B decoder
// 1,543,714,304 with its head tied.
TEST(QwenVl, Qwen2VlMatchesThePublishedCount) {
  const std::string repo = "erax-ai/EraX-VL-2B-V1.5";
  const ModelGraph g = BuildOk(Config(repo));
  const ParamCounts c = CountsOk(g);
  EXPECT_EQ(c.total, TruthParams(repo));
  EXPECT_EQ(c.total, 2208985600u);
  EXPECT_EQ(c.on_disk, c.total);  // tied head not stored, rotary buffers not saved
  ASSERT_EQ(g.sections.size(), 3u);
  EXPECT_EQ(g.sections[0].name, "vision tower");
  EXPECT_EQ(g.sections[2].name, "language model");
  ASSERT_EQ(c.by_section.size(), 3u);
  EXPECT_EQ(c.by_section[0], 1505280u + 32u * 19677440u);
  EXPECT_EQ(c.by_section[1], 34087936u);
  EXPECT_EQ(c.by_section[2], 1543714304u);
  EXPECT_TRUE(g.tied);
  EXPECT_EQ(g.hidden, 1536);

  const auto stored = StoredShapes(g);
  EXPECT_EQ(stored.at("visual.patch_embed.proj.weight"),
            (std::vector<int64_t>{1280, 3, 2, 14, 14}));
  EXPECT_EQ(stored.at("visual.blocks.31.attn.qkv.weight"), (std::vector<int64_t>{3840, 1280}));
  EXPECT_EQ(stored.at("visual.blocks.0.norm1.bias"), (std::vector<int64_t>{1280}));
  EXPECT_EQ(stored.at("visual.blocks.0.mlp.fc1.weight"), (std::vector<int64_t>{5120, 1280}));
  EXPECT_EQ(stored.at("visual.merger.mlp.0.weight"), (std::vector<int64_t>{5120, 5120}));
  EXPECT_EQ(stored.at("visual.merger.mlp.2.weight"), (std::vector<int64_t>{1536, 5120}));
  EXPECT_EQ(stored.at("model.layers.27.self_attn.k_proj.bias"), (std::vector<int64_t>{256}));
  EXPECT_EQ(stored.count("lm_head.weight"), 0u);
  EXPECT_EQ(stored.count("visual.blocks.32.attn.qkv.weight"), 0u);
}

// Qwen2.5-VL-3B: the Qwen2.5-3B decoder (3,085,938,688) plus the tower and merger, 668,684,288.
TEST(QwenVl, Qwen25VlMatchesThePublishedCount) {
  const std::string repo = "huihui-ai/Qwen2.5-VL-3B-Instruct-abliterated";
  const ModelGraph g = BuildOk(Config(repo));
  const ParamCounts c = CountsOk(g);
  EXPECT_EQ(c.total, TruthParams(repo));
  EXPECT_EQ(c.total, 3754622976u);
  ASSERT_EQ(c.by_section.size(), 3u);
  EXPECT_EQ(c.by_section[0] + c.by_section[1], 668684288u);
  EXPECT_EQ(c.by_section[2], 3085938688u);
  EXPECT_EQ(c.embedding, 311164928u + 1505280u);  // the tied tokens once, the patches
  const auto stored = StoredShapes(g);
  EXPECT_EQ(stored.at("visual.blocks.0.mlp.gate_proj.weight"), (std::vector<int64_t>{3420, 1280}));
  EXPECT_EQ(stored.at("visual.blocks.0.mlp.down_proj.bias"), (std::vector<int64_t>{1280}));
  EXPECT_EQ(stored.count("visual.blocks.0.norm1.bias"), 0u);  // RMSNorm
  EXPECT_EQ(stored.at("visual.merger.ln_q.weight"), (std::vector<int64_t>{1280}));
  EXPECT_EQ(stored.at("model.embed_tokens.weight"), (std::vector<int64_t>{151936, 2048}));
}

// Only the decoder's 36 layers cache K and V; the tower's 32 blocks read all patches at once.
TEST(QwenVl, OnlyTheDecoderCachesKeysAndValues) {
  const ModelGraph g = BuildOk(Config("huihui-ai/Qwen2.5-VL-3B-Instruct-abliterated"));
  const KvCache kv = ComputeKvCache(g, 1024, 2);
  EXPECT_EQ(kv.cached_attention_layers, 36);
  EXPECT_DOUBLE_EQ(kv.bytes_per_token, 36.0 * 2 * 2 * 128 * 2);  // layers * K,V * kv_heads * hd
  EXPECT_TRUE(g.decodes);
}

// Newer configs nest the text keys in text_config: the same graph.
TEST(QwenVl, ReadsTextConfigWhenNested) {
  const nlohmann::json flat = Config("huihui-ai/Qwen2.5-VL-3B-Instruct-abliterated");
  nlohmann::json nested = {{"model_type", "qwen2_5_vl"},
                           {"torch_dtype", "bfloat16"},
                           {"tie_word_embeddings", true},
                           {"vision_config", flat["vision_config"]},
                           {"text_config", flat}};
  nested["text_config"].erase("vision_config");
  nested["text_config"].erase("tie_word_embeddings");
  nested["text_config"]["model_type"] = "qwen2_5_vl_text";
  EXPECT_EQ(CountsOk(BuildOk(nested)).total, 3754622976u);
}

// The checkpoint a Qwen2-VL graph describes, read back: every tensor matches, the rank-5 Conv3d
// patch embedding included, and the tensors alone give the same count.
TEST(QwenVl, ItsOwnCheckpointMatchesTensorByTensor) {
  nlohmann::json config = Config("erax-ai/EraX-VL-2B-V1.5");
  const ModelGraph g = BuildOk(config);
  EstimateInput input;
  input.headers = {HeaderOf(g)};
  Result<Estimate> e = EstimateModel(config, input);
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_TRUE(e->checkpoint.has_value());
  EXPECT_TRUE(e->checkpoint->missing.empty());
  EXPECT_TRUE(e->checkpoint->unexpected.empty());
  EXPECT_TRUE(e->checkpoint->shape_mismatches.empty());
  EXPECT_EQ(e->checkpoint->delta, 0);
  Result<ModelGraph> read = BuildGraphFromCheckpoint({HeaderOf(g)}, nullptr);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(CountsOk(*read).total, 2208985600u);
  EXPECT_EQ(StoredShapes(*read).at("visual.patch_embed.proj.weight"),
            (std::vector<int64_t>{1280, 3, 2, 14, 14}));
}

TEST(QwenVl, AbsurdVisionDepthFailsWithOneLine) {
  nlohmann::json config = Config("erax-ai/EraX-VL-2B-V1.5");
  config["vision_config"]["depth"] = 1000000000;
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("vision_config: depth 1000000000 is absurd"), std::string::npos)
      << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);
  config = Config("erax-ai/EraX-VL-2B-V1.5");
  config["vision_config"] = 7;
  EXPECT_FALSE(BuildModelGraph(config).ok());
}

}  // namespace
}  // namespace hubwatch
