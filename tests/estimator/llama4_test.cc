// Llama 4 (arch_llama4.cc, arch_llama4_vision.cc): Scout and Maverick counted exactly against
// the totals the Hub reports for their checkpoints (tests/fixtures/models/truth-qwenvl.json).
// Their config.json files are gated and no verbatim copy was found, so the configs below carry
// only the dimensions of the released models as a public printout of Scout's Llama4Config and
// Maverick's published builder give them (see the truth file); they are not fixtures.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/estimate.h"
#include "estimator/kv_cache.h"
#include "tests/estimator/llama4_config.h"
#include "tests/estimator/composite_test_util.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::BuildOk;
using testing::CountsOk;
using testing::Llama4Config;
using testing::ReadJsonFixture;
using testing::StoredShapes;

uint64_t TruthParams(const std::string& repo) {
  return ReadJsonFixture("models/truth-qwenvl.json").at(repo).at("params").get<uint64_t>();
}


// Vision model 850,960,896 (34 layers of 23,807,872, adapter 39,845,888, patches, class token,
// 577 positions, two LayerNorms), projector 20,971,520, decoder 107,769,861,120.
TEST(Llama4, ScoutMatchesTheHubCount) {
  const ModelGraph g = BuildOk(Llama4Config(false));
  const ParamCounts c = CountsOk(g);
  EXPECT_EQ(c.total, TruthParams("meta-llama/Llama-4-Scout-17B-16E-Instruct"));
  EXPECT_EQ(c.total, 108641793536u);
  EXPECT_EQ(c.on_disk, c.total);
  ASSERT_EQ(c.by_section.size(), 3u);
  EXPECT_EQ(c.by_section[0], 850960896u);
  EXPECT_EQ(c.by_section[1], 20971520u);
  EXPECT_EQ(c.by_section[2], 107769861120u);
  const auto stored = StoredShapes(g);
  EXPECT_EQ(stored.at("language_model.model.layers.0.feed_forward.experts.gate_up_proj"),
            (std::vector<int64_t>{16, 5120, 16384}));
  EXPECT_EQ(stored.at("language_model.model.layers.47.feed_forward.experts.down_proj"),
            (std::vector<int64_t>{16, 8192, 5120}));
  EXPECT_EQ(stored.at("language_model.model.layers.3.feed_forward.router.weight"),
            (std::vector<int64_t>{16, 5120}));
  EXPECT_EQ(stored.at("language_model.model.layers.3.feed_forward.shared_expert.up_proj.weight"),
            (std::vector<int64_t>{8192, 5120}));
  EXPECT_EQ(stored.at("language_model.lm_head.weight"), (std::vector<int64_t>{202048, 5120}));
  EXPECT_EQ(stored.at("vision_model.patch_embedding.linear.weight"),
            (std::vector<int64_t>{1408, 588}));
  EXPECT_EQ(stored.at("vision_model.positional_embedding_vlm"), (std::vector<int64_t>{577, 1408}));
  EXPECT_EQ(stored.at("vision_model.class_embedding"), (std::vector<int64_t>{1408}));
  EXPECT_EQ(stored.at("vision_model.model.layers.33.self_attn.q_proj.bias"),
            (std::vector<int64_t>{1408}));
  EXPECT_EQ(stored.at("vision_model.vision_adapter.mlp.fc1.weight"),
            (std::vector<int64_t>{4096, 5632}));
  EXPECT_EQ(stored.at("multi_modal_projector.linear_1.weight"), (std::vector<int64_t>{5120, 4096}));
}

// 24 MoE layers of 128 experts and 24 dense layers: decoder 400,711,848,960, the same vision
// model and projector as Scout.
TEST(Llama4, MaverickMatchesTheHubCount) {
  const ModelGraph g = BuildOk(Llama4Config(true));
  const ParamCounts c = CountsOk(g);
  EXPECT_EQ(c.total, TruthParams("meta-llama/Llama-4-Maverick-17B-128E-Instruct"));
  EXPECT_EQ(c.total, 401583781376u);
  ASSERT_EQ(c.by_section.size(), 3u);
  EXPECT_EQ(c.by_section[2], 400711848960u);
  const auto stored = StoredShapes(g);
  EXPECT_EQ(stored.at("language_model.model.layers.0.feed_forward.gate_proj.weight"),
            (std::vector<int64_t>{16384, 5120}));
  EXPECT_EQ(stored.at("language_model.model.layers.1.feed_forward.experts.gate_up_proj"),
            (std::vector<int64_t>{128, 5120, 16384}));
  EXPECT_EQ(stored.count("language_model.model.layers.0.feed_forward.router.weight"), 0u);
}

// The decoder alone (Llama4ForCausalLM): one routed expert and the shared one per token, so
// 17,172,894,720 active of 107,769,861,120 (embedding and head included), the figures an
// independent constructor-derived inventory gives (see the truth file).
TEST(Llama4, TextModelCountsOneRoutedExpertActive) {
  nlohmann::json text = Llama4Config(false)["text_config"];
  text["architectures"] = {"Llama4ForCausalLM"};
  const ParamCounts c = CountsOk(BuildOk(text));
  EXPECT_EQ(c.total, 107769861120u);
  EXPECT_EQ(c.active, 17172894720u);
}

// RoPE layers keep one chunk of K and V; every fourth (NoPE) layer the whole context; the
// vision layers nothing.
TEST(Llama4, ChunkedLayersCacheOneChunk) {
  const ModelGraph g = BuildOk(Llama4Config(false));
  const KvCache kv = ComputeKvCache(g, 100000, 2);
  EXPECT_EQ(kv.cached_attention_layers, 48);
  EXPECT_EQ(kv.sliding_layers, 36);
  const double per_token = 2.0 * 8 * 128 * 2;  // K and V, 8 heads of 128, 2 bytes
  EXPECT_DOUBLE_EQ(kv.bytes_per_sequence, per_token * (36.0 * 8192 + 12.0 * 100000));
  EXPECT_TRUE(g.decodes);
  EXPECT_EQ(g.vocab, 202048);
}

TEST(Llama4, HugeExpertCountFailsWithOneLine) {
  nlohmann::json config = Llama4Config(true);
  config["text_config"]["num_local_experts"] = 1000000;
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("num_local_experts 1000000 is absurd"), std::string::npos)
      << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);
  config = Llama4Config(false);
  config["text_config"]["no_rope_layers"] = {1, 1, 1, 0};
  g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("no_rope_layers lists 4 layers"), std::string::npos)
      << g.error().message;
}

// The whole estimate (memory plans, fit on every card, cost, lints) runs on the composite; how
// long it takes is BM_EstimateLlama4Maverick's (BENCHMARKS.md).
TEST(Llama4, MaverickWholeEstimate) {
  Result<Estimate> e = EstimateModel(Llama4Config(true), EstimateInput{});
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->params.total, 401583781376u);
  EXPECT_EQ(e->graph.sections.size(), 3u);
}

}  // namespace
}  // namespace hubwatch
