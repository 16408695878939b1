#include "estimator/estimate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::ModelConfigPath;
using testing::ReadJsonFixture;

Estimate EstimateFor(const std::string& repo, EstimateInput input = {}) {
  Result<Estimate> e = EstimateModel(ReadJsonFixture(ModelConfigPath(repo)), input);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.ok() ? std::move(e).value() : Estimate{};
}

EstimateInput Seed() {
  EstimateInput in;
  in.assumptions = *PresetAssumptions("seed");
  return in;
}

const MemoryPlan& Plan(const Estimate& e, MemoryMode mode) {
  for (const MemoryPlan& p : e.memory) {
    if (p.mode == mode) return p;
  }
  ADD_FAILURE() << "no plan " << ModeName(mode);
  return e.memory.front();
}

const ModeFit& FitOn(const Estimate& e, const std::string& card, MemoryMode mode) {
  for (const CardFit& f : e.fit) {
    if (f.card.id != card) continue;
    for (const ModeFit& m : f.modes) {
      if (m.mode == mode) return m;
    }
  }
  ADD_FAILURE() << "no fit " << card << " " << ModeName(mode);
  return e.fit.front().modes.front();
}

double Component(const MemoryPlan& p, MemoryItem item) {
  for (const MemoryComponent& c : p.components) {
    if (c.item == item) return c.bytes;
  }
  ADD_FAILURE() << "no component " << ItemName(item) << " in " << p.name();
  return 0;
}

// KV bytes per token at 16 bits, every layer full context, for every ground-truth model.
TEST(GroundTruth, KvBytesPerToken) {
  for (const char* file : {"models/ground-truth.json", "models/more-truth.json"}) {
    const nlohmann::json truth = ReadJsonFixture(file);
    for (auto it = truth.begin(); it != truth.end(); ++it) {
      if (it.key().front() == '_') continue;
      SCOPED_TRACE(it.key());
      EXPECT_EQ(EstimateFor(it.key()).kv.bytes_per_token,
                it->at("kv_bytes_per_token_16bit").get<double>());
    }
  }
}

// The page hubwatch grew from, for gemma-2-9b-it: serve bf16 weights 18.5 GB, KV for 4096
// tokens 1.41 GB, serve batches 11 / 36 / 73 on A100 40 / 80 GB / H200, LoRA r=16 adapters
// 54,018,048.
TEST(SeedCrossCheck, Gemma2_9bIt) {
  const Estimate e = EstimateFor("google/gemma-2-9b-it", Seed());
  const MemoryPlan& serve = Plan(e, MemoryMode::kServe);
  EXPECT_NEAR(Component(serve, MemoryItem::kWeights) / 1e9, 18.5, 0.05);
  EXPECT_EQ(e.kv.context, 4096);
  EXPECT_NEAR(e.kv.bytes_per_sequence / 1e9, 1.41, 0.005);
  EXPECT_EQ(FitOn(e, "a100-40gb", MemoryMode::kServe).max_batch, 11);
  EXPECT_EQ(FitOn(e, "a100-80gb", MemoryMode::kServe).max_batch, 36);
  EXPECT_EQ(FitOn(e, "h200-141gb", MemoryMode::kServe).max_batch, 73);
  EXPECT_EQ(e.lora_params, 54018048u);
  // The seed's full fine-tune preset: 1.2 x 16 B per parameter of model states.
  const MemoryPlan& full = Plan(e, MemoryMode::kFullFinetune);
  double states = 0;
  for (MemoryItem c :
       {MemoryItem::kWeights, MemoryItem::kGradients, MemoryItem::kMasterWeights,
        MemoryItem::kAdamFirstMoment, MemoryItem::kAdamSecondMoment, MemoryItem::kStateOverhead}) {
    states += Component(full, c);
  }
  EXPECT_DOUBLE_EQ(states, 1.2 * 16 * 9241705984.0);
}

TEST(Memory, ComponentsSumToTheTotal) {
  for (const char* repo : {"google/gemma-2-9b-it", "mistralai/Mixtral-8x7B-v0.1",
                           "deepseek-ai/DeepSeek-V2-Lite", "openai-community/gpt2"}) {
    for (bool seed : {false, true}) {
      EstimateInput in = seed ? Seed() : EstimateInput{};
      in.workload.batch = 3;
      const Estimate e = EstimateFor(repo, in);
      for (const MemoryPlan& p : e.memory) {
        SCOPED_TRACE(std::string(repo) + " " + std::string(p.name()));
        double sum = 0;
        for (const MemoryComponent& c : p.components) sum += c.bytes;
        EXPECT_NEAR(sum, p.TotalAt(3), 1e-6 * sum);
      }
    }
  }
}

TEST(Memory, FullFineTuneIsSixteenBytesPerParamPlusActivations) {
  const Estimate e = EstimateFor("meta-llama/Llama-2-7b-hf");
  const MemoryPlan& full = Plan(e, MemoryMode::kFullFinetune);
  EXPECT_DOUBLE_EQ(full.Fixed() - 1e9, 16.0 * 6738415616.0);
  // Llama-2-7b, SDPA, per token per layer: 2 RMSNorms (2 x (4096*2 + 4)), attention (input 4096 +
  // q, k, v, out 4 x 4096, bf16, + fp32 LSE 32 x 4), MLP (4096 + 4 x 11008, bf16).
  const double layer = 2 * (4096 * 2 + 4) + (5 * 4096) * 2 + 32 * 4 + (4096 + 4 * 11008) * 2;
  const double final_part = 4096 * 2 + 4 + 4096 * 2 + 32000 * 4;  // norm, head input, fp32 logits
  EXPECT_DOUBLE_EQ(full.PerSample(), 2048 * (32 * layer + final_part));
}

TEST(Memory, EagerAttentionStoresScoresAndCheckpointingDropsThem) {
  EstimateInput sdpa, eager, ckpt;
  eager.assumptions.eager_attention = true;
  ckpt.assumptions.gradient_checkpointing = true;
  const double a =
      Plan(EstimateFor("meta-llama/Llama-2-7b-hf", sdpa), MemoryMode::kFullFinetune).PerSample();
  const double b =
      Plan(EstimateFor("meta-llama/Llama-2-7b-hf", eager), MemoryMode::kFullFinetune).PerSample();
  const double c =
      Plan(EstimateFor("meta-llama/Llama-2-7b-hf", ckpt), MemoryMode::kFullFinetune).PerSample();
  // Eager adds heads x seq scores per token per layer (bf16) and drops the fp32 LSE.
  EXPECT_DOUBLE_EQ(b - a, 2048.0 * 32 * (32.0 * 2048 * 2 - 32 * 4));
  // Checkpointing keeps each block's input and recomputes one block at a time.
  const double layer = a / 2048 - (4096 * 2 + 4 + 4096 * 2 + 32000 * 4);
  EXPECT_DOUBLE_EQ(c, 2048 * (32 * 4096 * 2 + layer / 32 + 4096 * 2 + 4 + 4096 * 2 + 32000 * 4));
}

TEST(Memory, QloraBaseIsAboutHalfAByteAndServingHonoursSlidingWindows) {
  const Estimate e = EstimateFor("mistralai/Mistral-7B-v0.1");
  const double nf4 = Component(Plan(e, MemoryMode::kQlora), MemoryItem::kNf4Base);
  const double linear =
      7241732096.0 - 2 * 32000.0 * 4096 - 65.0 * 4096;  // minus embed, head, norms
  EXPECT_NEAR(nf4 / linear, 0.5 + 1.0 / 64 + 4.0 / (64 * 256), 1e-4);
  // Mistral v0.1: every layer slides over 4096 tokens, so a 32k context holds 4096 per layer.
  EstimateInput in;
  in.workload.context = 32768;
  const Estimate long_context = EstimateFor("mistralai/Mistral-7B-v0.1", in);
  EXPECT_EQ(long_context.kv.sliding_layers, 32);
  EXPECT_DOUBLE_EQ(long_context.kv.bytes_per_sequence, 131072.0 * 4096);
  // Gemma-2 alternates: half the layers hold 4096, half the full 8192.
  in.workload.context = 8192;
  const Estimate gemma = EstimateFor("google/gemma-2-9b-it", in);
  EXPECT_DOUBLE_EQ(gemma.kv.bytes_per_sequence, 344064.0 / 2 * 4096 + 344064.0 / 2 * 8192);
}

TEST(Fit, BorderlineHoldsOnTheEstimateButNotWithTheMargin) {
  const Estimate e = EstimateFor("meta-llama/Llama-2-7b-hf");
  for (const CardFit& f : e.fit) {
    for (const ModeFit& m : f.modes) {
      const double cap = f.card.memory_gb * 1e9 * (m.mode == MemoryMode::kServe ? 0.9 : 1.0);
      const Verdict want = m.bytes_at_batch1 * 1.43 <= cap ? Verdict::kFits
                           : m.bytes_at_batch1 <= cap      ? Verdict::kBorderline
                                                           : Verdict::kNo;
      EXPECT_EQ(m.verdict, want) << f.card.id << " " << ModeName(m.mode);
      EXPECT_LE(m.safe_batch, m.max_batch);
    }
  }
}

TEST(Fit, TooLargeForOneCardIsSplitIntoNamedBlockRanges) {
  const Estimate e = EstimateFor("google/gemma-2-9b-it");
  const ModeFit& full = FitOn(e, "a100-40gb", MemoryMode::kFullFinetune);
  ASSERT_EQ(full.verdict, Verdict::kNo);
  ASSERT_TRUE(full.split.has_value());
  // 148 GB of model states over 40 GB cards: at least 4 cards.
  EXPECT_GE(full.split->cards, 4);
  ASSERT_EQ(full.split->unit_ranges.size(), static_cast<size_t>(full.split->cards));
  const auto [f0, f1] = full.split->unit_ranges.front();
  const auto [l0, l1] = full.split->unit_ranges.back();
  EXPECT_EQ(SplitRangeLabel(44, f0, f1).rfind("embed + blocks 0-", 0), 0u);
  EXPECT_NE(SplitRangeLabel(44, l0, l1).find("41 + norm + head"), std::string::npos);
  // Contiguous and complete: every unit on exactly one card.
  size_t next = 0;
  for (const auto& [first, last] : full.split->unit_ranges) {
    EXPECT_EQ(first, next);
    next = last + 1;
  }
  EXPECT_EQ(next, 44u);
  EXPECT_GE(full.split->max_batch, 1);
}

TEST(Cost, RooflineSixNTokensForFullFineTune) {
  const Estimate e = EstimateFor("google/gemma-2-9b-it");
  for (const CostEstimate& c : e.cost) {
    if (c.card != "h100-80gb") continue;
    const double tokens = 10.0 * 50000 * 2048;
    const double n = 9241705984.0;
    EXPECT_DOUBLE_EQ(c.flops, (c.mode == MemoryMode::kFullFinetune ? 6 : 4) * n * tokens);
    if (c.cards) {
      EXPECT_NEAR(c.hours, c.flops / (989e12 * 0.4) / 3600, 1e-9);
    }
    EXPECT_EQ(c.steps, 15625);
  }
}

TEST(Estimate, BadWorkloadAndJsonAreClearErrors) {
  EstimateInput in;
  in.workload.seq = 0;
  Result<Estimate> e = EstimateModel(ReadJsonFixture(ModelConfigPath("openai-community/gpt2")), in);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("--seq must be between 1"), std::string::npos);
  Result<Estimate> j = EstimateModelFromText("{\"model_type\": ", {});
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message.find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace hubwatch
