#include "estimator/lints.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "estimator/architectures.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::ModelConfigPath;
using testing::ReadJsonFixture;

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

}  // namespace
}  // namespace hubwatch
