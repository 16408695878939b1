// Llama 3.2 Vision (arch_mllama.cc, arch_mllama_vision.cc) counted exactly against the Hub's
// count for meta-llama/Llama-3.2-11B-Vision-Instruct (truth-multimodal-ssm.json,
// _counts_without_config). Its config.json is gated and no verbatim copy was found: the config
// below carries the released 11B's dimensions (see truth-qwenvl.json); it is not a fixture.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/kv_cache.h"
#include "tests/estimator/composite_test_util.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::BuildOk;
using testing::CountsOk;
using testing::ReadJsonFixture;
using testing::StoredShapes;

nlohmann::json Mllama11B() {
  nlohmann::json text = {{"model_type", "mllama_text_model"},
                         {"cross_attention_layers", {3, 8, 13, 18, 23, 28, 33, 38}},
                         {"hidden_act", "silu"},
                         {"hidden_size", 4096},
                         {"intermediate_size", 14336},
                         {"max_position_embeddings", 131072},
                         {"num_attention_heads", 32},
                         {"num_hidden_layers", 40},
                         {"num_key_value_heads", 8},
                         {"tie_word_embeddings", false},
                         {"vocab_size", 128256}};
  nlohmann::json vision = {{"model_type", "mllama_vision_model"},
                           {"hidden_size", 1280},
                           {"image_size", 560},
                           {"intermediate_layers_indices", {3, 7, 15, 23, 30}},
                           {"intermediate_size", 5120},
                           {"max_num_tiles", 4},
                           {"num_attention_heads", 16},
                           {"num_channels", 3},
                           {"num_global_layers", 8},
                           {"num_hidden_layers", 32},
                           {"patch_size", 14},
                           {"vision_output_dim", 7680}};
  return {{"architectures", {"MllamaForConditionalGeneration"}},
          {"model_type", "mllama"},
          {"text_config", text},
          {"vision_config", vision},
          {"torch_dtype", "bfloat16"}};
}

// Text 9,775,192,080 (embedding 128,264 x 4096, head 128,256 x 4096, 32 self-attention layers of
// 218,112,000, 8 cross-attention layers of 218,112,258: q/k norms 256 and two gates), vision
// 863,567,379 (tile embeddings of 9 aspect ratios, 32 local and 8 gated global layers, three
// scalar gates), projector 7680 -> 4096 with bias 31,461,376: 10,670,220,835 in all.
TEST(Mllama, Llama32VisionMatchesTheHubCount) {
  const ModelGraph g = BuildOk(Mllama11B());
  const ParamCounts c = CountsOk(g);
  const nlohmann::json truth = ReadJsonFixture("models/truth-multimodal-ssm.json");
  EXPECT_EQ(c.total, truth.at("_counts_without_config")
                         .at("meta-llama/Llama-3.2-11B-Vision-Instruct")
                         .at("params")
                         .get<uint64_t>());
  EXPECT_EQ(c.total, 10670220835u);
  ASSERT_EQ(c.by_section.size(), 3u);
  EXPECT_EQ(c.by_section[0], 863567379u);
  EXPECT_EQ(c.by_section[1], 31461376u);
  EXPECT_EQ(c.by_section[2], 9775192080u);

  const auto stored = StoredShapes(g);
  EXPECT_EQ(stored.at("language_model.model.embed_tokens.weight"),
            (std::vector<int64_t>{128264, 4096}));
  EXPECT_EQ(stored.at("language_model.model.layers.3.cross_attn.k_norm.weight"),
            (std::vector<int64_t>{128}));
  EXPECT_EQ(stored.at("language_model.model.layers.38.cross_attn_mlp_gate"),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(stored.at("language_model.model.layers.4.self_attn.q_proj.weight"),
            (std::vector<int64_t>{4096, 4096}));
  EXPECT_EQ(stored.count("language_model.model.layers.3.self_attn.q_proj.weight"), 0u);
  EXPECT_EQ(stored.at("vision_model.gated_positional_embedding.tile_embedding.weight"),
            (std::vector<int64_t>{9, 4 * 1601 * 1280}));
  EXPECT_EQ(stored.at("vision_model.global_transformer.layers.7.gate_ffn"),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(stored.at("vision_model.transformer.layers.31.mlp.fc1.bias"),
            (std::vector<int64_t>{5120}));
  EXPECT_EQ(stored.at("vision_model.patch_embedding.weight"),
            (std::vector<int64_t>{1280, 3, 14, 14}));
  EXPECT_EQ(stored.at("multi_modal_projector.bias"), (std::vector<int64_t>{4096}));
}

// 32 self-attention layers cache per token; the 8 cross-attention layers K and V of one
// image's 4 tiles x 1,601 patches once per sequence; the vision layers nothing.
TEST(Mllama, CrossAttentionCachesTheImageOnce) {
  const ModelGraph g = BuildOk(Mllama11B());
  const KvCache kv = ComputeKvCache(g, 1000, 2);
  EXPECT_EQ(kv.cached_attention_layers, 32);
  const double per_token = 2.0 * 8 * 128 * 2;
  EXPECT_DOUBLE_EQ(kv.cross_bytes_per_sequence, 8 * 4 * 1601 * per_token);
  EXPECT_DOUBLE_EQ(kv.bytes_per_sequence, 32 * 1000 * per_token + 8 * 4 * 1601 * per_token);
}

TEST(Mllama, CrossLayerOutsideTheModelFails) {
  nlohmann::json config = Mllama11B();
  config["text_config"]["cross_attention_layers"] = {3, 4000};
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("cross_attention_layers lists 4000"), std::string::npos)
      << g.error().message;
}

}  // namespace
}  // namespace hubwatch
