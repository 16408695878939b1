#include "estimator/lints.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "estimator/architectures.h"
#include "estimator/estimate.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::HeaderOf;
using testing::ModelConfigPath;
using testing::ReadFixture;
using testing::ReadJsonFixture;
using testing::TinyFp8Llama;

std::vector<Lint> LintsOf(const nlohmann::json& config) {
  Result<ModelGraph> g = BuildModelGraph(config);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? LintModel(config, *g, nullptr) : std::vector<Lint>{};
}

const Lint* Find(const std::vector<Lint>& lints, const std::string& code) {
  for (const Lint& l : lints) {
    if (l.code == code) return &l;
  }
  return nullptr;
}

nlohmann::json Llama3() { return ReadJsonFixture(ModelConfigPath("meta-llama/Meta-Llama-3-8B")); }

ModelGraph GraphOf(const nlohmann::json& config) {
  Result<ModelGraph> g = BuildModelGraph(config);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(g).value() : ModelGraph{};
}

// The lints of a whole estimate against a checkpoint of the given shards.
std::vector<Lint> LintsWith(const nlohmann::json& config, std::vector<SafetensorsHeader> shards) {
  EstimateInput in;
  in.headers = std::move(shards);
  Result<Estimate> e = EstimateModel(config, in);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.ok() ? e->lints : std::vector<Lint>{};
}

testing::TensorEdit Drop(const std::string& name) {
  return [name](const std::string& n, SafetensorsTensor&) { return n != name; };
}

TEST(Lints, CleanConfigHasNone) { EXPECT_TRUE(LintsOf(Llama3()).empty()); }

TEST(Lints, HeadsNotDivisibleByKvHeads) {
  nlohmann::json c = Llama3();
  c["num_key_value_heads"] = 6;
  const std::vector<Lint> lints = LintsOf(c);
  const Lint* l = Find(lints, "heads_not_divisible");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->severity, LintSeverity::kError);
  EXPECT_NE(l->message.find("32 is not divisible by num_key_value_heads 6"), std::string::npos);
}

TEST(Lints, HeadDimDiffersFromHiddenOverHeads) {
  const std::vector<Lint> explicit_dim =
      LintsOf(ReadJsonFixture(ModelConfigPath("google/gemma-2-9b-it")));
  ASSERT_NE(Find(explicit_dim, "head_dim_differs"), nullptr);
  EXPECT_EQ(Find(explicit_dim, "head_dim_differs")->severity, LintSeverity::kInfo);
  // Without the key, gemma's default of 256 still applies: a warning, the config hides it.
  nlohmann::json c = ReadJsonFixture(ModelConfigPath("google/gemma-2-9b-it"));
  c.erase("head_dim");
  const std::vector<Lint> lints = LintsOf(c);
  const Lint* implicit = Find(lints, "head_dim_differs");
  ASSERT_NE(implicit, nullptr);
  EXPECT_EQ(implicit->severity, LintSeverity::kWarning);
}

TEST(Lints, TokenIdsOutsideTheVocabulary) {
  nlohmann::json c = Llama3();
  c["eos_token_id"] = {128001, 128256};  // a list, as Llama 3.1 has; the second is out of range
  c["pad_token_id"] = -1;
  const std::vector<Lint> lints = LintsOf(c);
  int out_of_vocab = 0;
  for (const Lint& l : lints) out_of_vocab += l.code == "token_id_out_of_vocab";
  EXPECT_EQ(out_of_vocab, 2);
}

// A config.json can list a million ids: one lint per key, counting them, naming the first five.
TEST(Lints, TokenIdsOutsideTheVocabularyAreOneLintPerKey) {
  nlohmann::json c = Llama3();
  nlohmann::json ids = nlohmann::json::array();
  for (int64_t i = 0; i < 100000; ++i) ids.push_back(128256 + i);
  ids.push_back(128001);  // inside: not counted
  c["eos_token_id"] = std::move(ids);
  const std::vector<Lint> lints = LintsOf(c);
  ASSERT_EQ(lints.size(), 1u);
  EXPECT_EQ(lints[0].code, "token_id_out_of_vocab");
  EXPECT_NE(lints[0].message.find("eos_token_id: 100,000 token ids outside the vocabulary "
                                  "[0, 128256); first 5: 128256, 128257, 128258, 128259, 128260"),
            std::string::npos)
      << lints[0].message;
  EXPECT_LT(lints[0].message.size(), 300u);
}

// 2^64 - 1 is a JSON number nlohmann reads as unsigned; shown as itself, not as -1.
TEST(Lints, HugeTokenIdsAreShownAsWritten) {
  nlohmann::json c = Llama3();
  c["eos_token_id"] = nlohmann::json::parse("18446744073709551615");
  const std::vector<Lint> lints = LintsOf(c);
  const Lint* l = Find(lints, "token_id_out_of_vocab");
  ASSERT_NE(l, nullptr);
  EXPECT_NE(l->message.find("eos_token_id 18446744073709551615 is outside"), std::string::npos)
      << l->message;
  EXPECT_EQ(l->message.find("-1"), std::string::npos) << l->message;
}

TEST(Lints, SlidingWindowLargerThanTheContext) {
  nlohmann::json c = ReadJsonFixture(ModelConfigPath("mistralai/Mistral-7B-v0.1"));
  c["sliding_window"] = 65536;
  EXPECT_NE(Find(LintsOf(c), "sliding_window_too_large"), nullptr);
  EXPECT_EQ(Find(LintsOf(ReadJsonFixture(ModelConfigPath("mistralai/Mistral-7B-v0.1"))),
                 "sliding_window_too_large"),
            nullptr);
}

TEST(Lints, RopeScalingLegacyAndInvalid) {
  nlohmann::json legacy = Llama3();
  legacy["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  EXPECT_NE(Find(LintsOf(legacy), "rope_scaling_legacy"), nullptr);
  EXPECT_EQ(Find(LintsOf(legacy), "rope_scaling_invalid"), nullptr);

  // Llama 3.1's schema: a llama3 rope without its frequency factors is broken.
  nlohmann::json llama31 = Llama3();
  llama31["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  const std::vector<Lint> broken = LintsOf(llama31);
  const Lint* l = Find(broken, "rope_scaling_invalid");
  ASSERT_NE(l, nullptr);
  EXPECT_NE(l->message.find("low_freq_factor"), std::string::npos);

  llama31["max_position_embeddings"] = 131072;
  llama31["rope_scaling"] = {{"rope_type", "llama3"},
                             {"factor", 8.0},
                             {"low_freq_factor", 1.0},
                             {"high_freq_factor", 4.0},
                             {"original_max_position_embeddings", 8192}};
  EXPECT_TRUE(LintsOf(llama31).empty());

  nlohmann::json unknown = Llama3();
  unknown["rope_scaling"] = {{"rope_type", "fancy"}};
  EXPECT_NE(Find(LintsOf(unknown), "rope_scaling_invalid"), nullptr);
}

// Every key present, every value broken: transformers' _validate_llama3_parameters warns, and
// its rope divides original_max_position_embeddings by both factors.
TEST(Lints, Llama3RopeWithZeroFactorsIsInvalidNamingEachField) {
  nlohmann::json c = Llama3();
  c["max_position_embeddings"] = 131072;
  c["rope_scaling"] = {{"rope_type", "llama3"},
                       {"factor", 8.0},
                       {"low_freq_factor", 0},
                       {"high_freq_factor", 0},
                       {"original_max_position_embeddings", 0}};
  std::string messages;
  for (const Lint& l : LintsOf(c)) {
    EXPECT_EQ(l.code, "rope_scaling_invalid") << l.message;
    EXPECT_EQ(l.severity, LintSeverity::kError) << l.message;
    messages += l.message + "\n";
  }
  for (const char* needle :
       {"rope_scaling.low_freq_factor must be a number > 0, got 0",
        "rope_scaling.high_freq_factor must be a number > 0, got 0",
        "high_freq_factor must be greater than low_freq_factor",
        "original_max_position_embeddings must be a positive integer, got 0"}) {
    EXPECT_NE(messages.find(needle), std::string::npos) << needle << " in\n" << messages;
  }

  // In order but inverted, and an original context that is not below the model's.
  c["rope_scaling"]["low_freq_factor"] = 4.0;
  c["rope_scaling"]["high_freq_factor"] = 1.0;
  c["rope_scaling"]["original_max_position_embeddings"] = 131072;
  const std::vector<Lint> lints = LintsOf(c);
  ASSERT_EQ(lints.size(), 2u);
  EXPECT_NE(lints[0].message.find("greater than low_freq_factor, got 1 and 4"), std::string::npos)
      << lints[0].message;
  EXPECT_EQ(lints[1].severity, LintSeverity::kWarning);
  EXPECT_NE(lints[1].message.find("131072 is not below max_position_embeddings 131072"),
            std::string::npos)
      << lints[1].message;
}

// Falcon-7B ties its head and its checkpoint stores lm_head.weight again: expected, so only an
// info, with the duplicate elements (vocab 65,024 x hidden 4,544 = 295,469,056).
TEST(CheckpointLints, TiedHeadStoredAgainIsAnInfoWithItsSize) {
  const nlohmann::json falcon = ReadJsonFixture(ModelConfigPath("tiiuae/falcon-7b"));
  const ModelGraph g = GraphOf(falcon);
  const std::vector<Lint> lints = LintsWith(falcon, {HeaderOf(g)});
  const Lint* l = Find(lints, "tied_head_stored");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->severity, LintSeverity::kInfo);
  EXPECT_EQ(l->message,
            "embeddings are tied, and the checkpoint stores lm_head.weight again (295,469,056 "
            "duplicate elements on disk)");
  EXPECT_EQ(Find(lints, "checkpoint_delta"), nullptr);
  EXPECT_EQ(Find(lints, "untied_head_missing"), nullptr);
  // The same checkpoint without the copy: nothing to say about the head.
  const std::vector<Lint> without = LintsWith(falcon, {HeaderOf(g, Drop("lm_head.weight"))});
  EXPECT_EQ(Find(without, "tied_head_stored"), nullptr);
  EXPECT_EQ(Find(without, "untied_head_missing"), nullptr);
  EXPECT_EQ(Find(without, "checkpoint_delta"), nullptr);
}

// gpt2 ties its head and its checkpoint has none; one that does carries a separately trained
// head that transformers would silently replace by the embedding: a warning.
TEST(CheckpointLints, TiedConfigWithAStoredHeadIsAWarning) {
  const nlohmann::json gpt2 = ReadJsonFixture(ModelConfigPath("openai-community/gpt2"));
  Result<SafetensorsHeader> real =
      ParseSafetensorsHeader(ReadFixture("safetensors/gpt2.header.json"));
  ASSERT_TRUE(real.ok()) << real.error().message;
  EXPECT_EQ(Find(LintsWith(gpt2, {*real}), "tied_head_stored"), nullptr);

  SafetensorsHeader with_head = *real;
  SafetensorsTensor head;
  head.dtype = "F32";
  head.shape = {50257, 768};
  head.elements = 50257u * 768u;
  head.data_begin = with_head.data_size;
  head.data_end = head.data_begin + 4 * head.elements;
  with_head.tensors.emplace("lm_head.weight", head);
  const std::vector<Lint> lints = LintsWith(gpt2, {with_head});
  const Lint* l = Find(lints, "tied_head_stored");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->severity, LintSeverity::kWarning);
  EXPECT_EQ(l->message.rfind("tie_word_embeddings is true but the checkpoint has lm_head.weight: "
                             "transformers ties the head to the embedding and ignores it",
                             0),
            0u)
      << l->message;
  const Lint* delta = Find(lints, "checkpoint_delta");
  ASSERT_NE(delta, nullptr);
  EXPECT_NE(delta->message.find("by 38597376 parameters: unexpected lm_head.weight"),
            std::string::npos)
      << delta->message;

  // An untied model storing its head is what it should be: no lint about the head.
  const nlohmann::json llama = Llama3();
  EXPECT_TRUE(LintsWith(llama, {HeaderOf(GraphOf(llama))}).empty());
}

TEST(CheckpointLints, UntiedHeadMissingIsAnError) {
  const nlohmann::json llama = Llama3();
  const ModelGraph g = GraphOf(llama);
  const std::vector<Lint> lints = LintsWith(llama, {HeaderOf(g, Drop("lm_head.weight"))});
  const Lint* l = Find(lints, "untied_head_missing");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->severity, LintSeverity::kError);
  EXPECT_EQ(l->message,
            "tie_word_embeddings is false but the checkpoint has no lm_head.weight: transformers "
            "would initialise the head randomly");
  EXPECT_EQ(Find(lints, "tied_head_stored"), nullptr);
  // Another missing tensor is a delta, not a missing head.
  const std::vector<Lint> norm = LintsWith(llama, {HeaderOf(g, Drop("model.norm.weight"))});
  EXPECT_EQ(Find(norm, "untied_head_missing"), nullptr);
  ASSERT_NE(Find(norm, "checkpoint_delta"), nullptr);
  // Tied, the same checkpoint is complete: no head expected, none missing.
  nlohmann::json tied = llama;
  tied["tie_word_embeddings"] = true;
  EXPECT_TRUE(LintsWith(tied, {HeaderOf(g, Drop("lm_head.weight"))}).empty());
}

TEST(CheckpointLints, DtypeOtherThanTorchDtype) {
  const nlohmann::json llama = Llama3();
  const ModelGraph g = GraphOf(llama);
  EXPECT_EQ(Find(LintsWith(llama, {HeaderOf(g)}), "checkpoint_dtype"), nullptr);
  // Every tensor F16 where torch_dtype says bfloat16: embedding, 32 x 9 block tensors, final
  // norm and head = 291 tensors; the first by name is lm_head.weight.
  auto to_f16 = [](const std::string&, SafetensorsTensor& t) {
    t.dtype = "F16";
    return true;
  };
  const std::vector<Lint> lints = LintsWith(llama, {HeaderOf(g, to_f16)});
  const Lint* l = Find(lints, "checkpoint_dtype");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->severity, LintSeverity::kWarning);
  EXPECT_EQ(l->message,
            "291 tensors are stored as F16 where torch_dtype says BF16 (first: lm_head.weight)");
  EXPECT_EQ(Find(lints, "checkpoint_delta"), nullptr) << "a dtype is not a parameter delta";
}

// A fine-grained FP8 checkpoint: the block Linear weights are F8_E4M3 and their scales F32 by
// design, so a faithful checkpoint has no dtype lint; each kind of deviation is named with its
// own count and expected dtype.
TEST(CheckpointLints, DtypeMismatchesOfDifferentKindsAreCountedApart) {
  const nlohmann::json tiny = TinyFp8Llama();
  const ModelGraph g = GraphOf(tiny);
  EXPECT_TRUE(LintsWith(tiny, {HeaderOf(g)}).empty());
  auto edit = [](const std::string& name, SafetensorsTensor& t) {
    if (name == "model.embed_tokens.weight" || name == "lm_head.weight") t.dtype = "F16";
    if (name == "model.layers.0.mlp.down_proj.weight") t.dtype = "BF16";
    return true;
  };
  const std::vector<Lint> lints = LintsWith(tiny, {HeaderOf(g, edit)});
  const Lint* l = Find(lints, "checkpoint_dtype");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->message,
            "2 tensors are stored as F16 where torch_dtype says BF16 (first: lm_head.weight); "
            "1 tensor is stored as BF16 where F8_E4M3 is expected (first: "
            "model.layers.0.mlp.down_proj.weight)");
}

}  // namespace
}  // namespace hubwatch
