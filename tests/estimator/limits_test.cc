// What upstream and users control stays bounded: lists a config.json or a safetensors header
// makes as long as it likes are aggregated or capped in every rendering, quoted text is clipped
// and cannot drive a terminal, and numbers the user or the checkpoint supplies poison instead of
// wrapping.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>

#include "estimator/base/text.h"
#include "estimator/checkpoint_graph.h"
#include "estimator/estimate.h"
#include "estimator/format.h"
#include "estimator/report.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::ConfigWithEosIds;
using testing::HeaderOf;
using testing::ModelConfigPath;
using testing::ReadFixture;
using testing::ReadJsonFixture;

constexpr size_t kBound = 64 << 10;  // every rendering of the hostile config stays below this

Estimate Must(Result<Estimate> e) {
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.ok() ? std::move(e).value() : Estimate{};
}

// One upstream commit of a 10 MB config.json with 1.4M eos ids used to give one lint per id: a
// 260 MB estimate row. Now one lint, and every rendering is small.
TEST(Limits, AMillionTokenIdsAreOneLintAndASmallEstimate) {
  const std::string config = ConfigWithEosIds(1'400'000);
  ASSERT_GT(config.size(), 10'000'000u);
  const Estimate e = Must(EstimateModelFromText(config, {}));
  ASSERT_EQ(e.lints.size(), 1u);
  EXPECT_EQ(e.lints[0].code, "token_id_out_of_vocab");
  EXPECT_NE(e.lints[0].message.find("eos_token_id: 1,400,000 token ids outside the vocabulary "
                                    "[0, 128256); first 5: 128256, 128257, 128258, 128259, "
                                    "128260"),
            std::string::npos)
      << e.lints[0].message;
  const size_t json_bytes = EstimateToJson(e).dump().size();
  EXPECT_LT(json_bytes, kBound);
  EXPECT_LT(RenderText(e).size(), kBound);
  EXPECT_LT(RenderMarkdown(e).size(), kBound);
}

// A checkpoint of 3,000 tensors the model does not have, and 3,000 of its own reshaped and
// stored in the wrong dtype: the comparison keeps them all, every rendering shows a few and
// counts the rest.
// Python's json writes float('inf') as Infinity (Mamba-Codestral's released config.json has
// "time_step_limit": [0.0, Infinity]); transformers reads it, so do we, as null. The words
// inside strings are left alone, and text that is broken otherwise is still refused.
TEST(Limits, PythonInfinityAndNanInAConfigAreReadAsNull) {
  std::string config = ReadFixture("models/meta-llama__Meta-Llama-3-8B.config.json");
  config.insert(config.rfind('}'), R"(, "time_step_limit": [0.0, Infinity], "x": -Infinity,
      "y": NaN, "note": "Infinity \"NaN\" stays")");
  Result<Estimate> e = EstimateModelFromText(config, {});
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->params.total, 8030261248u);
  EXPECT_FALSE(EstimateModelFromText(R"({"model_type": Infinity)", {}).ok());
  EXPECT_FALSE(EstimateModelFromText(R"({"a": Infinityx})", {}).ok());
}

TEST(Limits, CheckpointListsAreCappedWithACountOfTheRest) {
  const nlohmann::json config = ReadJsonFixture(ModelConfigPath("openai-community/gpt2"));
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_TRUE(g.ok());
  SafetensorsHeader header = HeaderOf(*g, [](const std::string& name, SafetensorsTensor&) {
    return name.find(".attn.c_attn.") == std::string::npos;  // 24 missing
  });
  for (int i = 0; i < 3000; ++i) {
    SafetensorsTensor t;
    t.dtype = "F32";
    t.shape = {1};
    t.elements = 1;
    t.data_begin = header.data_size;
    header.data_size += 4;
    t.data_end = header.data_size;
    header.tensors.emplace("extra." + std::to_string(i) + ".weight", t);
  }
  EstimateInput in;
  in.headers = {header};
  const Estimate e = Must(EstimateModel(config, in));
  ASSERT_TRUE(e.checkpoint);
  EXPECT_EQ(e.checkpoint->unexpected.size(), kMaxKeptFindings);  // the first ones kept
  EXPECT_EQ(e.checkpoint->unexpected_count, 3000u);                // all counted

  const nlohmann::json j = EstimateToJson(e)["checkpoint"];
  EXPECT_EQ(j["unexpected"].size(), kMaxReportedItems);
  EXPECT_EQ(j["unexpected_omitted"], 3000 - kMaxReportedItems);
  EXPECT_EQ(j["missing"].size(), kMaxReportedItems);
  EXPECT_EQ(j["missing_omitted"], 24 - kMaxReportedItems);
  EXPECT_EQ(j["shape_mismatches_omitted"], 0);
  const std::string text = RenderText(e);
  EXPECT_NE(text.find(", ... (2,995 more)"), std::string::npos);
  EXPECT_LT(text.size(), kBound);
  for (const Lint& l : e.lints) EXPECT_LT(l.message.size(), 1000u) << l.code;
}

// Names and values quoted from upstream are clipped, at a character boundary.
TEST(Limits, QuotedUpstreamTextIsClipped) {
  nlohmann::json config = ReadJsonFixture(ModelConfigPath("meta-llama/Meta-Llama-3-8B"));
  config["num_hidden_layers"] = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) config["num_hidden_layers"].push_back(i);
  Result<Estimate> e = EstimateModel(config, {});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("must be an integer, got an array of 100,000 values"),
            std::string::npos)
      << e.error().message;

  config = ReadJsonFixture(ModelConfigPath("meta-llama/Meta-Llama-3-8B"));
  config["model_type"] = std::string(100000, 'x');
  e = EstimateModel(config, {});
  ASSERT_FALSE(e.ok());
  EXPECT_LT(e.error().message.size(), 1000u);

  const std::string euro = "\xE2\x82\xAC";  // three bytes
  EXPECT_EQ(Clip(std::string(79, 'a') + euro), std::string(79, 'a') + "...");
  EXPECT_EQ(Clip("short"), "short");
  const nlohmann::json clipped = Clip(std::string(78, 'a') + euro + euro);
  EXPECT_NO_THROW(clipped.dump());  // valid UTF-8
  // A quoted string escapes DEL and C1, which JSON itself leaves raw.
  EXPECT_EQ(QuoteJson("a\x7f\xC2\x9B"), "\"a\\x7f\\u009b\"");
}

TEST(Limits, ControlCharactersNeverReachTheTerminal) {
  nlohmann::json config = ReadJsonFixture(ModelConfigPath("meta-llama/Meta-Llama-3-8B"));
  config["model_type"] = "evil\x1b[2J\x1b[31m\xC2\x9B";
  config["architectures"] = {"Evil\rForCausalLM"};
  EstimateInput in;
  in.build.assume = "llama";
  const Estimate e = Must(EstimateModel(config, in));
  for (const std::string& report : {RenderText(e), RenderMarkdown(e)}) {
    EXPECT_EQ(report.find('\x1b'), std::string::npos);
    EXPECT_EQ(report.find('\r'), std::string::npos);
    EXPECT_EQ(report.find("\xC2\x9B"), std::string::npos);
    EXPECT_NE(report.find("evil\\x1b[2J\\x1b[31m\\u009b"), std::string::npos);
  }
  // A parse error quotes the bytes it stopped at, which need not be UTF-8.
  Result<Estimate> bad = EstimateModelFromText("{\"model_type\": \"\xFF\xFE\"}", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NO_THROW(nlohmann::json(bad.error().message).dump()) << bad.error().message;
}

// The API caps lora_rank at 65,536; every caller of the estimator now gets the same check.
TEST(Limits, LoraRankIsCappedAndTheCountPoisonsInsteadOfWrapping) {
  const nlohmann::json config = ReadJsonFixture(ModelConfigPath("meta-llama/Meta-Llama-3-8B"));
  EstimateInput in;
  in.assumptions.lora_rank = INT64_MAX;
  Result<Estimate> e = EstimateModel(config, in);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message,
            "--lora-rank must be between 1 and 65536, got " + std::to_string(INT64_MAX));
  in.assumptions.lora_rank = kMaxLoraRank;
  EXPECT_TRUE(EstimateModel(config, in).ok());

  // Below the check, the product itself poisons: 2^63 - 1 * (in + out) does not wrap.
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_TRUE(g.ok());
  Assumptions a;
  a.lora_rank = INT64_MAX;
  EXPECT_TRUE(LoraParameters(*g, a).overflowed());
  a.lora_rank = -1;
  EXPECT_TRUE(LoraParameters(*g, a).overflowed());
  a.lora_rank = 16;
  EXPECT_EQ(LoraParameters(*g, a), Count(41943040));  // r * (in + out) over 32 x 7 linears
}

TEST(Limits, LoraTargetsMustNameALinearOfTheArchitecture) {
  const nlohmann::json config = ReadJsonFixture(ModelConfigPath("meta-llama/Meta-Llama-3-8B"));
  EstimateInput in;
  in.assumptions.lora_targets = {"q_proj", "nonexistent"};
  Result<Estimate> e = EstimateModel(config, in);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(e.error().message,
            "--lora-targets: 'nonexistent' is not a linear module of llama (known: q_proj, "
            "k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)");
  in.assumptions.lora_targets = {"q_proj", "v_proj"};
  EXPECT_EQ(Must(EstimateModel(config, in)).lora_params, 32u * 16 * (4096 + 4096 + 4096 + 1024));
}

// Element counts in a header are upstream's numbers: five F4 tensors of 2^61 elements each fit
// a header (2^60 bytes apiece) but sum past 2^64. An overflow error, not a wrapped delta.
TEST(Limits, CheckpointElementSumsPoisonInsteadOfWrapping) {
  const nlohmann::json config = ReadJsonFixture(ModelConfigPath("openai-community/gpt2"));
  SafetensorsHeader header;
  for (int i = 0; i < 5; ++i) {
    SafetensorsTensor t;
    t.dtype = "F4";
    t.shape = {int64_t{1} << 61};
    t.elements = uint64_t{1} << 61;
    t.data_begin = header.data_size;
    header.data_size += uint64_t{1} << 60;
    t.data_end = header.data_size;
    header.tensors.emplace("huge." + std::to_string(i), t);
  }
  EstimateInput in;
  in.headers = {header};
  Result<Estimate> e = EstimateModel(config, in);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kOverflow);
  EXPECT_NE(e.error().message.find("overflow 64 bits"), std::string::npos) << e.error().message;

  EXPECT_EQ(SignedDifference(Count(5), Count(7)), -2);
  EXPECT_EQ(SignedDifference(Count(uint64_t{1} << 63), Count(0)), std::nullopt);
  EXPECT_EQ(SignedDifference(Count::Poisoned(), Count(0)), std::nullopt);
}

// A header of tensors named as the test says, each of one byte.
SafetensorsHeader OneByteTensors(size_t n, const std::function<std::string(size_t)>& name,
                                 const std::function<int64_t(size_t)>& width = nullptr) {
  SafetensorsHeader header;
  for (size_t i = 0; i < n; ++i) {
    SafetensorsTensor t;
    t.dtype = "U8";
    t.shape = {width ? width(i) : 1};
    t.elements = static_cast<uint64_t>(t.shape[0]);
    t.data_begin = header.data_size;
    header.data_size += t.elements;
    t.data_end = header.data_size;
    header.tensors.emplace(name(i), t);
  }
  return header;
}

// The graph a checkpoint makes is bounded whatever its names say (every estimate over it, and
// the estimate's structure, are as large as it): more numbered layers, more distinct layer
// shapes or more tensor templates than any released model are refused, quickly and saying so.
TEST(Limits, ACheckpointGraphPastItsLimitsIsRefusedSayingWhich) {
  auto refused = [](const SafetensorsHeader& header) {
    EstimateInput in;
    in.headers = {header};
    Result<Estimate> e = EstimateModelFromText("{}", in);
    return e.ok() ? std::string("accepted") : e.error().message;
  };
  EXPECT_NE(refused(OneByteTensors(kMaxCheckpointLayers + 1,
                                   [](size_t i) {
                                     return "model.layers." + std::to_string(i) + ".w.weight";
                                   }))
                .find("numbered layers, more than the 16,384"),
            std::string::npos);
  // Each layer a shape of its own.
  EXPECT_NE(refused(OneByteTensors(
                        kMaxCheckpointBlocks + 1,
                        [](size_t i) { return "model.layers." + std::to_string(i) + ".w.weight"; },
                        [](size_t i) { return static_cast<int64_t>(i + 1); }))
                .find("different sets of tensor names and shapes"),
            std::string::npos);
  // One layer of more templates than a graph may hold.
  EXPECT_NE(refused(OneByteTensors(kMaxCheckpointSpecs + 1,
                                   [](size_t i) {
                                     return "model.layers.0.w" + std::to_string(i) + ".weight";
                                   }))
                .find("distinct tensor templates"),
            std::string::npos);
}

// Within the limits, the structure lists at most kMaxListedTensors tensors and counts the rest
// per node, so the stored estimate stays small.
TEST(Limits, TheStructureListsItsFirstTensorsAndCountsTheRest) {
  SafetensorsHeader header = OneByteTensors(20'000, [](size_t i) {
    return "model.layers." + std::to_string(i % 4) + ".w" + std::to_string(i / 4) + ".weight";
  });
  EstimateInput in;
  in.headers = {header};
  const Estimate e = Must(EstimateModelFromText("{}", in));
  EXPECT_EQ(e.params.total, 20'000u);
  const nlohmann::json j = EstimateToJson(e);
  size_t listed = 0, omitted = 0;
  for (const nlohmann::json& block : j["structure"]["blocks"]) {
    for (const nlohmann::json& node : block["nodes"]) {
      listed += node["tensors"].size();
      omitted += node.value("tensors_omitted", size_t{0});
    }
  }
  EXPECT_LE(listed, kMaxListedTensors);
  EXPECT_EQ(listed + omitted, 5'000u);  // one block of the four alike layers: 5,000 templates
  EXPECT_LT(j.dump().size(), 256u << 10);
}

}  // namespace
}  // namespace hubwatch

namespace hubwatch {
namespace {

// Issue 29's bad inputs, each one clear error naming where it is, before any work of its size.
TEST(Limits, CompositeAndHugeConfigsAreOneClearError) {
  const nlohmann::json llava = ReadJsonFixture(ModelConfigPath("edbeeching/vsft-llava-1.5-7b-hf"));
  auto error_of = [](const nlohmann::json& config) {
    Result<Estimate> e = EstimateModel(config, {});
    EXPECT_FALSE(e.ok());
    return e.ok() ? std::string() : e.error().message;
  };
  // A config nesting itself: each text_config a llava again, eight deep.
  nlohmann::json nested = llava;
  for (int i = 0; i < 8; ++i) {
    nlohmann::json outer = llava;
    outer["text_config"] = std::move(nested);
    nested = std::move(outer);
  }
  EXPECT_EQ(error_of(nested),
            "config.json: text_config: text_config: text_config: text_config: vision_config: "
            "composite configs nest deeper than 4 levels");
  nlohmann::json wrong = llava;
  wrong["text_config"] = 7;
  EXPECT_EQ(error_of(wrong), "config.json: text_config is not a JSON object");
  nlohmann::json deep = llava;
  deep["text_config"]["num_hidden_layers"] = 1e9;
  EXPECT_EQ(error_of(deep),
            "config.json: text_config: num_hidden_layers 1000000000 is absurd (limit 4096)");
  nlohmann::json experts = ReadJsonFixture(ModelConfigPath("mistralai/Mixtral-8x7B-v0.1"));
  experts["num_local_experts"] = 1'000'000;
  EXPECT_EQ(error_of(experts), "config.json: num_local_experts 1000000 is absurd (limit 65536)");
  // A part whose model_type is not modelled makes the whole unsupported (not malformed), so a
  // checkpoint's tensors can still stand in for it.
  nlohmann::json unknown = llava;
  unknown["text_config"]["model_type"] = "quantum-foam";
  Result<Estimate> e = EstimateModel(unknown, {});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kUnsupported) << e.error().message;
}

TEST(Text, HexLowerIsTwoLowerCaseDigitsPerByte) {
  EXPECT_EQ(HexLower(std::string_view("\x1f\xa0\x00\xff", 4)), "1fa000ff");
  EXPECT_EQ(HexLower(""), "");
}

}  // namespace
}  // namespace hubwatch
