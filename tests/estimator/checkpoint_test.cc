#include "estimator/checkpoint.h"

#include <gtest/gtest.h>

#include "estimator/architectures.h"
#include "estimator/estimate.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::ModelConfigPath;
using testing::ReadFixture;
using testing::ReadJsonFixture;

SafetensorsHeader Header(const std::string& fixture) {
  Result<SafetensorsHeader> h = ParseSafetensorsHeader(ReadFixture("safetensors/" + fixture));
  EXPECT_TRUE(h.ok()) << (h.ok() ? "" : h.error().message);
  return h.ok() ? *h : SafetensorsHeader{};
}

Estimate Gpt2With(const std::vector<SafetensorsHeader>& headers) {
  EstimateInput in;
  in.headers = headers;
  Result<Estimate> e = EstimateModel(ReadJsonFixture(ModelConfigPath("openai-community/gpt2")), in);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.ok() ? std::move(e).value() : Estimate{};
}

bool HasLint(const Estimate& e, const std::string& code) {
  for (const Lint& l : e.lints) {
    if (l.code == code) return true;
  }
  return false;
}

// gpt2's real tensor names and shapes: every tensor matches, the 12,582,912 extra elements are
// the 12 causal-mask buffers, and the parameter delta is 0.
TEST(Checkpoint, Gpt2MatchesTensorByTensor) {
  const Estimate e = Gpt2With({Header("gpt2.header.json")});
  ASSERT_TRUE(e.checkpoint.has_value());
  const CheckpointComparison& c = *e.checkpoint;
  EXPECT_TRUE(
      c.prefix_stripped);  // the checkpoint names "h.0...", transformers "transformer.h.0..."
  EXPECT_EQ(c.checkpoint_tensors, 160u);
  EXPECT_EQ(c.matched, 160u);
  EXPECT_TRUE(c.missing.empty());
  EXPECT_TRUE(c.unexpected.empty());
  EXPECT_TRUE(c.shape_mismatches.empty());
  EXPECT_TRUE(c.dtype_mismatches.empty());
  EXPECT_EQ(c.checkpoint_elements, 137022720u);
  EXPECT_EQ(c.buffer_elements, 12582912u);
  EXPECT_EQ(c.delta, 12582912);
  EXPECT_EQ(c.parameter_delta, 0);
  EXPECT_FALSE(HasLint(e, "checkpoint_delta"));
}

// One tensor reshaped, one missing: reported exactly, by name, with the parameter delta.
TEST(Checkpoint, PerturbedHeaderIsReportedExactly) {
  const Estimate e = Gpt2With({Header("gpt2-perturbed.header.json")});
  const CheckpointComparison& c = *e.checkpoint;
  EXPECT_EQ(c.checkpoint_tensors, 159u);
  EXPECT_EQ(c.matched, 158u);
  ASSERT_EQ(c.missing, std::vector<std::string>{"h.11.ln_2.bias"});
  EXPECT_EQ(c.missing_elements, 768u);
  ASSERT_EQ(c.shape_mismatches.size(), 1u);
  EXPECT_EQ(c.shape_mismatches[0].name, "h.3.mlp.c_fc.weight");
  EXPECT_EQ(c.shape_mismatches[0].expected, "[768, 3072]");
  EXPECT_EQ(c.shape_mismatches[0].actual, "[768, 3000]");
  EXPECT_EQ(c.shape_delta_elements, 768 * (3000 - 3072));
  EXPECT_EQ(c.parameter_delta, -768 + 768 * (3000 - 3072));
  EXPECT_EQ(c.delta, 12582912 + c.parameter_delta);
  ASSERT_TRUE(HasLint(e, "checkpoint_delta"));
  for (const Lint& l : e.lints) {
    if (l.code != "checkpoint_delta") continue;
    EXPECT_NE(l.message.find("h.11.ln_2.bias"), std::string::npos) << l.message;
    EXPECT_NE(l.message.find("h.3.mlp.c_fc.weight [768, 3000]"), std::string::npos) << l.message;
  }
}

TEST(Checkpoint, ShardsAreMergedAndDuplicatesRefused) {
  const SafetensorsHeader full = Header("gpt2.header.json");
  SafetensorsHeader a, b;
  bool first = true;
  for (const auto& [name, t] : full.tensors) {
    (first ? a : b).tensors.emplace(name, t);
    first = !first;
  }
  const Estimate e = Gpt2With({a, b});
  EXPECT_EQ(e.checkpoint->matched, 160u);
  EXPECT_EQ(e.checkpoint->parameter_delta, 0);

  EstimateInput in;
  in.headers = {full, a};
  Result<Estimate> dup =
      EstimateModel(ReadJsonFixture(ModelConfigPath("openai-community/gpt2")), in);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("stored in two shards"), std::string::npos);
}

// Falcon's checkpoint stores the tied head again: expected, counted as a tied copy, not a delta.
TEST(Checkpoint, TiedHeadStoredTwiceIsATiedCopyNotADelta) {
  Result<ModelGraph> g = BuildModelGraph(ReadJsonFixture(ModelConfigPath("tiiuae/falcon-7b")));
  ASSERT_TRUE(g.ok());
  SafetensorsHeader h;
  uint64_t offset = 0;
  ForEachTensor(*g, [&](const std::string& name, const TensorSpec& spec, int64_t) {
    if (!spec.stored) return;
    SafetensorsTensor t;
    t.dtype = "BF16";
    t.shape = spec.shape.ToVector();
    t.elements = spec.ElementsPerCopy().value();
    t.data_begin = offset;
    offset += 2 * t.elements;
    t.data_end = offset;
    h.tensors.emplace(name, t);
  });
  Result<ParamCounts> counts = CountParameters(*g);
  Result<CheckpointComparison> c = CompareWithCheckpoint(*g, *counts, {h});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->checkpoint_elements, 7217189760u);
  EXPECT_EQ(c->tied_copy_elements, 65024u * 4544u);
  EXPECT_EQ(c->parameter_delta, 0);
  EXPECT_TRUE(c->dtype_mismatches.empty());
}

}  // namespace
}  // namespace hubwatch
