#include "estimator/estimate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::HeaderOf;
using testing::ModelConfigPath;
using testing::ReadFixture;
using testing::ReadJsonFixture;
using testing::TinyFp8Llama;

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

// Found by fuzz_estimate_config: a Qwen2-MoE config routing each token to 94 of 60 experts was
// estimated with more active than total parameters. Every MoE family refuses it; top_k equal
// to the expert count is still a valid (if dense) router.
TEST(MoeConfig, MoreExpertsPerTokenThanExpertsIsInvalid) {
  const struct {
    std::string repo;
    std::string experts_key;
  } kFamilies[] = {{"Qwen/Qwen1.5-MoE-A2.7B", "num_experts"},
                   {"mistralai/Mixtral-8x7B-v0.1", "num_local_experts"},
                   {"deepseek-ai/DeepSeek-V2-Lite", "n_routed_experts"}};
  for (const auto& family : kFamilies) {
    nlohmann::json config = ReadJsonFixture(ModelConfigPath(family.repo));
    const int64_t experts = config.at(family.experts_key).get<int64_t>();
    config["num_experts_per_tok"] = experts + 1;
    Result<Estimate> over = EstimateModel(config, {});
    ASSERT_FALSE(over.ok()) << family.repo;
    EXPECT_NE(over.error().message.find("num_experts_per_tok (" + std::to_string(experts + 1) +
                                        ") exceeds the number of experts (" +
                                        std::to_string(experts) + ")"),
              std::string::npos)
        << over.error().message;
    config["num_experts_per_tok"] = experts;
    Result<Estimate> all = EstimateModel(config, {});
    ASSERT_TRUE(all.ok()) << family.repo << ": " << all.error().message;
    EXPECT_LE(all->params.active, all->params.total) << family.repo;
  }
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
        MemoryItem::kAdamFirstMoment, MemoryItem::kAdamSecondMoment}) {
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

// A full fine-tune keeps 14 B per parameter throughout (bf16 weights, fp32 master, AdamW m and
// v) and peaks either at the loss (activations and the loss's buffers) or at the optimizer step
// (bf16 gradients and AdamW's fp32 sqrt(v) + eps: 6 B per parameter), whichever is larger.
TEST(Memory, FullFineTunePeaksAtTheLossOrAtTheOptimizerStep) {
  EstimateInput in;
  in.assumptions.metric = MemoryMetric::kAllocated;
  const Estimate e = EstimateFor("meta-llama/Llama-2-7b-hf", in);
  const MemoryPlan& full = Plan(e, MemoryMode::kFullFinetune);
  const double P = 6738415616.0;
  EXPECT_DOUBLE_EQ(full.Fixed(), 14.0 * P);
  EXPECT_DOUBLE_EQ(full.Step(), 6.0 * P);
  // Llama-2-7b, SDPA, per token per layer: 2 RMSNorms (2 x (4096*2 + 4)), attention (input 4096 +
  // q, k, v, out 4 x 4096, bf16, + fp32 LSE 32 x 4), MLP (4096 + 4 x 11008, bf16); then the final
  // norm, the head's input and 12 B per logit (fp32 logits, log-softmax, its gradient).
  const double layer = 2 * (4096 * 2 + 4) + (5 * 4096) * 2 + 32 * 4 + (4096 + 4 * 11008) * 2;
  const double final_part = 4096 * 2 + 4 + 4096 * 2 + 32000 * 12;
  EXPECT_DOUBLE_EQ(full.PerSample(), 2048 * (32 * layer + final_part));
  // 10.9 GB per sample against 40.4 GB at the step: the step peaks up to batch 3.
  EXPECT_TRUE(full.PeaksAtStep(3));
  EXPECT_FALSE(full.PeaksAtStep(4));
  EXPECT_DOUBLE_EQ(full.TotalAt(1), 20.0 * P);
  EXPECT_DOUBLE_EQ(full.TotalAt(4), 14.0 * P + 4 * full.PerSample());

  // The card: + the CUDA context, and the allocator's reserve (runtime.fragmentation 0.2) over the
  // peak's transient tensors.
  in.assumptions.metric = MemoryMetric::kCard;
  const Estimate on_card = EstimateFor("meta-llama/Llama-2-7b-hf", in);
  const MemoryPlan& card = Plan(on_card, MemoryMode::kFullFinetune);
  EXPECT_DOUBLE_EQ(card.TotalAt(1), 14.0 * P + 0.5e9 + 6.0 * P * 1.2);
  EXPECT_DOUBLE_EQ(card.Bytes(MemoryItem::kAllocatorReserve), 6.0 * P * 0.2);
  EXPECT_DOUBLE_EQ(card.Bytes(MemoryItem::kOptimizerStep), 4.0 * P);
  EXPECT_DOUBLE_EQ(card.Bytes(MemoryItem::kActivations), 0);  // freed by the step
}

// What the published runs vary, each as an assumption: the optimizer (8-bit states, paged ones
// outside torch's allocator), sharding over ranks, accumulated gradients.
TEST(Memory, TheOptimizerShardingAndAccumulationAreAssumptions) {
  const double P = 6738415616.0;
  auto plan = [&](auto set) {
    EstimateInput in;
    in.assumptions.metric = MemoryMetric::kAllocated;
    set(in.assumptions);
    return Plan(EstimateFor("meta-llama/Llama-2-7b-hf", in), MemoryMode::kFullFinetune);
  };
  const MemoryPlan eight = plan([](Assumptions& a) { a.optimizer = Optimizer::kAdamW8bit; });
  EXPECT_NEAR(eight.Fixed() / P, 2 + 4 + 2 * (1 + 4.0 / 2048), 1e-9);
  EXPECT_DOUBLE_EQ(eight.Step(), 2 * P);  // gradients only: bitsandbytes updates in place
  const MemoryPlan paged = plan([](Assumptions& a) { a.optimizer = Optimizer::kPagedAdamW8bit; });
  EXPECT_DOUBLE_EQ(paged.Fixed(), 6 * P);  // its states are not torch's to count
  const MemoryPlan zero3 = plan([](Assumptions& a) {
    a.sharding = Sharding::kZero3;
    a.gpus = 4;
  });
  // A quarter of the states, and a block's bf16 weights gathered whole with the next prefetched.
  EXPECT_DOUBLE_EQ(zero3.Fixed(), 14.0 * P / 4 + 2 * 202383360.0 * 2);
  EXPECT_DOUBLE_EQ(zero3.Step(), 6.0 * P / 4);
  // A QLoRA block is gathered as it is stored: its 4-bit weights and scales, and bf16 norms.
  EstimateInput one;
  one.assumptions.metric = MemoryMetric::kAllocated;
  EstimateInput four = one;
  four.assumptions.sharding = Sharding::kZero3;
  four.assumptions.gpus = 4;
  const double nf4 =
      Component(Plan(EstimateFor("meta-llama/Llama-2-7b-hf", one), MemoryMode::kQlora),
                MemoryItem::kNf4Base);  // 32 identical blocks; embeddings and head stay bf16
  EXPECT_DOUBLE_EQ(Plan(EstimateFor("meta-llama/Llama-2-7b-hf", four), MemoryMode::kQlora)
                       .Bytes(MemoryItem::kGatheredBlock),
                   2 * (nf4 / 32 + 2 * 4096 * 2.0));
  const MemoryPlan accumulated = plan([](Assumptions& a) { a.grad_accum = 8; });
  EXPECT_DOUBLE_EQ(accumulated.Fixed(), 16.0 * P);  // gradients kept between micro-batches
  EXPECT_DOUBLE_EQ(accumulated.Step(), 4.0 * P);
  Assumptions a;
  ASSERT_TRUE(SetAssumption(a, "train.optimizer", "sgd_momentum").ok());
  EXPECT_EQ(a.optimizer, Optimizer::kSgdMomentum);
  EXPECT_FALSE(SetAssumption(a, "train.optimizer", "lion").ok());
  ASSERT_TRUE(SetAssumption(a, "train.checkpointing", "selective").ok());
  EXPECT_EQ(a.checkpointing, Checkpointing::kSelective);
}

TEST(Memory, EagerAttentionStoresScoresAndCheckpointingDropsThem) {
  EstimateInput sdpa, eager, ckpt;
  for (EstimateInput* in : {&sdpa, &eager, &ckpt}) {
    in->assumptions.metric = MemoryMetric::kAllocated;
  }
  eager.assumptions.eager_attention = true;
  ckpt.assumptions.checkpointing = Checkpointing::kFull;
  const double a =
      Plan(EstimateFor("meta-llama/Llama-2-7b-hf", sdpa), MemoryMode::kFullFinetune).PerSample();
  const double b =
      Plan(EstimateFor("meta-llama/Llama-2-7b-hf", eager), MemoryMode::kFullFinetune).PerSample();
  const double c =
      Plan(EstimateFor("meta-llama/Llama-2-7b-hf", ckpt), MemoryMode::kFullFinetune).PerSample();
  // Eager adds heads x seq scores per token per layer (bf16) and drops the fp32 LSE.
  EXPECT_DOUBLE_EQ(b - a, 2048.0 * 32 * (32.0 * 2048 * 2 - 32 * 4));
  // Checkpointing keeps each block's input and recomputes one block at a time.
  const double layer = a / 2048 - (4096 * 2 + 4 + 4096 * 2 + 32000 * 12);
  EXPECT_DOUBLE_EQ(c, 2048 * (32 * 4096 * 2 + layer / 32 + 4096 * 2 + 4 + 4096 * 2 + 32000 * 12));
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

// Training and serving take their own batch: --serving-batch sets the sequences served at once
// (the KV cache grows with it), and the training plans keep --batch.
TEST(Memory, TheServingBatchIsItsOwnWorkloadKnob) {
  EstimateInput in;
  in.workload.batch = 2;
  const Estimate same = EstimateFor("mistralai/Mistral-7B-v0.1", in);
  in.workload.serving_batch = 16;
  const Estimate apart = EstimateFor("mistralai/Mistral-7B-v0.1", in);
  EXPECT_EQ(Plan(same, MemoryMode::kServe).batch, 2);
  EXPECT_EQ(Plan(apart, MemoryMode::kServe).batch, 16);
  EXPECT_DOUBLE_EQ(Component(Plan(apart, MemoryMode::kServe), MemoryItem::kKvCache),
                   16 * apart.kv.bytes_per_sequence);
  EXPECT_EQ(Plan(apart, MemoryMode::kLora).batch, 2);
  EXPECT_DOUBLE_EQ(Plan(apart, MemoryMode::kLora).TotalAt(2),
                   Plan(same, MemoryMode::kLora).TotalAt(2));
  in.workload.serving_batch = -1;
  EXPECT_FALSE(
      EstimateModelFromText(ReadFixture("models/mistralai__Mistral-7B-v0.1.config.json"), in).ok());
}

// Phi-3-mini-4k slides every layer over 2047 tokens (config sliding_window) at a 4096 context.
// Per token per layer: 32 KV heads x (K 96 + V 96) x 2 bytes = 12,288; 32 layers: 393,216.
// At 4096 tokens each layer holds 2047 of them: 393,216 x 2047 = 804,913,152 bytes; at 1024,
// below the window, all 1024: 393,216 x 1024 = 402,653,184.
TEST(KvCache, Phi3SlidesEveryLayerOver2047Tokens) {
  EstimateInput in;
  in.workload.context = 4096;
  const Estimate e = EstimateFor("microsoft/Phi-3-mini-4k-instruct", in);
  EXPECT_EQ(e.kv.bytes_per_token, 393216.0);
  EXPECT_EQ(e.kv.sliding_layers, 32);
  EXPECT_EQ(e.kv.bytes_per_sequence, 804913152.0);
  ASSERT_EQ(e.kv.layer_bytes_per_sequence.size(), 32u);
  EXPECT_EQ(e.kv.layer_bytes_per_sequence[31], 12288.0 * 2047);
  in.workload.context = 1024;
  EXPECT_EQ(EstimateFor("microsoft/Phi-3-mini-4k-instruct", in).kv.bytes_per_sequence, 402653184.0);
  // The window is what the config says: without it, every layer holds the whole context.
  nlohmann::json full = ReadJsonFixture(ModelConfigPath("microsoft/Phi-3-mini-4k-instruct"));
  full.erase("sliding_window");
  in.workload.context = 4096;
  Result<Estimate> no_window = EstimateModel(full, in);
  ASSERT_TRUE(no_window.ok());
  EXPECT_EQ(no_window->kv.sliding_layers, 0);
  EXPECT_EQ(no_window->kv.bytes_per_sequence, 393216.0 * 4096);
}

// gpt2 has no torch_dtype: float32, 4 bytes for each of its 137,022,720 stored elements
// (124,439,808 parameters + 12 causal-mask buffers of 1024 x 1024) = 548,090,880 bytes, which
// is exactly what the real checkpoint's header spans.
TEST(StoredBytes, Gpt2IsFloat32AndMatchesItsCheckpoint) {
  EstimateInput in;
  Result<SafetensorsHeader> h = ParseSafetensorsHeader(ReadFixture("safetensors/gpt2.header.json"));
  ASSERT_TRUE(h.ok()) << h.error().message;
  in.headers = {*h};
  const Estimate e = EstimateFor("openai-community/gpt2", in);
  const std::map<std::string, uint64_t> want = {{"F32", 548090880}};
  EXPECT_EQ(e.stored_bytes_by_dtype, want);
  ASSERT_TRUE(e.checkpoint.has_value());
  EXPECT_EQ(e.checkpoint->bytes_by_dtype, want);
  EXPECT_EQ(e.checkpoint->elements_by_dtype, (std::map<std::string, uint64_t>{{"F32", 137022720}}));
}

// The one-layer FP8 llama (hidden 64, 4 heads / 2 KV heads of 16, MLP 128, vocab 256), by hand:
//   BF16: embedding 256x64 + head 64x256 + 3 norms of 64 = 16,384 + 16,384 + 192 = 32,960
//         elements, 65,920 bytes;
//   F8_E4M3: q 64x64 + k 32x64 + v 32x64 + o 64x64 + gate, up 128x64 + down 64x128
//         = 4,096 + 2,048 + 2,048 + 4,096 + 3 x 8,192 = 36,864 elements, one byte each;
//   F32 scales, one per 32x32 block: q 2x2, k 1x2, v 1x2, o 2x2, gate 4x2, up 4x2, down 2x4
//         = 36 scales, 144 bytes.
TEST(StoredBytes, Fp8CheckpointByDtypeAndTheHeaderThatMatchesIt) {
  const std::map<std::string, uint64_t> bytes = {{"BF16", 65920}, {"F32", 144}, {"F8_E4M3", 36864}};
  Result<ModelGraph> g = BuildModelGraph(TinyFp8Llama());
  ASSERT_TRUE(g.ok()) << g.error().message;
  EstimateInput in;
  in.headers = {HeaderOf(*g)};
  Result<Estimate> e = EstimateModel(TinyFp8Llama(), in);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->params.total, 32960u + 36864u);
  EXPECT_EQ(e->params.on_disk, 32960u + 36864u + 36u);
  EXPECT_EQ(e->stored_bytes_by_dtype, bytes);
  ASSERT_TRUE(e->checkpoint.has_value());
  EXPECT_EQ(e->checkpoint->bytes_by_dtype, bytes);
  EXPECT_EQ(e->checkpoint->elements_by_dtype,
            (std::map<std::string, uint64_t>{{"BF16", 32960}, {"F32", 36}, {"F8_E4M3", 36864}}));
  EXPECT_EQ(e->checkpoint->parameter_delta, 0);
  EXPECT_EQ(e->checkpoint->extra_elements, 36u);

  // A checkpoint that stores the down projection in BF16 takes 8,192 bytes more there.
  in.headers = {HeaderOf(*g, [](const std::string& name, SafetensorsTensor& t) {
    if (name == "model.layers.0.mlp.down_proj.weight") t.dtype = "BF16";
    return true;
  })};
  Result<Estimate> bf16_down = EstimateModel(TinyFp8Llama(), in);
  ASSERT_TRUE(bf16_down.ok());
  EXPECT_EQ(bf16_down->checkpoint->bytes_by_dtype,
            (std::map<std::string, uint64_t>{
                {"BF16", 65920 + 2 * 8192}, {"F32", 144}, {"F8_E4M3", 36864 - 8192}}));
  EXPECT_EQ(bf16_down->stored_bytes_by_dtype, bytes) << "the reference layout does not move";
}

// A card list is capped and de-duplicated before any card is looked up or planned: a million
// entries cost as much as 65 (issue 28: 30,000 cards in one form post cost 340 MB).
TEST(Cards, ListsAreDeduplicatedAndCappedBeforeAnyWork) {
  Result<std::vector<Card>> same = ParseCards("h100, H100-80GB,h100-80,a100,a100-80gb");
  ASSERT_TRUE(same.ok()) << same.error().message;
  ASSERT_EQ(same->size(), 2u);
  EXPECT_EQ((*same)[0].id, "h100-80gb");
  EXPECT_EQ((*same)[1].id, "a100-80gb");

  std::string many;
  for (int i = 0; i < 1'000'000; ++i) many += "t4,";
  Result<std::vector<Card>> flood = ParseCards(many);
  ASSERT_FALSE(flood.ok());
  EXPECT_NE(flood.error().message.find("at most 64 entries"), std::string::npos)
      << flood.error().message;

  std::string distinct;
  for (size_t i = 0; i <= kMaxCards; ++i) distinct += "c" + std::to_string(i) + "=80:300:1,";
  Result<std::vector<Card>> seventeen = ParseCards(distinct);
  ASSERT_FALSE(seventeen.ok());
  EXPECT_NE(seventeen.error().message.find("at most 16 different cards"), std::string::npos);
  distinct.resize(distinct.rfind("c16="));
  EXPECT_TRUE(ParseCards(distinct).ok()) << "16 are allowed";

  // One id, two meanings: refused rather than silently picking one.
  Result<std::vector<Card>> twice = ParseCards("mine=80:300:1,mine=40:100:1");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("'mine' is given twice"), std::string::npos);
  // A quoted entry is clipped, however long.
  Result<std::vector<Card>> long_name = ParseCards(std::string(100'000, 'x'));
  ASSERT_FALSE(long_name.ok());
  EXPECT_LT(long_name.error().message.size(), 400u);
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

// Dollars = hours x price per card-hour x cards. gpt2 (124,439,808 parameters), default
// workload 10 epochs x 50,000 samples x 2048 tokens = 1.024e9 tokens, on a card of 100 TFLOP/s
// at 40% MFU for $2/h:
//   full: 6 x 124,439,808 x 1.024e9 = 7.64558180352e17 FLOPs / 4e13 FLOP/s = 19,113.95 s
//         = 5.309431808 h -> $10.618863616;
//   LoRA and QLoRA: 4 N tokens, two thirds of it -> 3.539621205 h, $7.079242411.
// A card too small for any one layer prices nothing.
TEST(Cost, DollarsAreHoursTimesPriceTimesCards) {
  EstimateInput in;
  in.cards = {{"toy", "Toy", 80, 100, 2.0}, {"speck", "Speck", 0.001, 100, 2.0}};
  const Estimate e = EstimateFor("openai-community/gpt2", in);
  ASSERT_EQ(e.cost.size(), 6u);  // 2 cards x (full, LoRA, QLoRA)
  for (const CostEstimate& c : e.cost) {
    SCOPED_TRACE(c.card + " " + std::string(ModeName(c.mode)));
    const bool full = c.mode == MemoryMode::kFullFinetune;
    if (c.card == "toy") {
      EXPECT_EQ(c.cards, 1);
      EXPECT_NEAR(c.hours, full ? 5.309431808 : 3.539621205, 1e-9);
      EXPECT_NEAR(c.usd, full ? 10.618863616 : 7.079242411, 1e-9);
    } else {
      EXPECT_EQ(c.cards, 0);
      EXPECT_EQ(c.hours, 0);
      EXPECT_EQ(c.usd, 0);
    }
  }
  // Split over several A100 40GB, gemma-2-9b-it pays for every card: 6 x 9,241,705,984 x
  // 1.024e9 FLOPs at 312 TFLOP/s x 0.4 = 126.382304 h, times $1.29, times the cards.
  const Estimate gemma = EstimateFor("google/gemma-2-9b-it");
  const ModeFit& fit = FitOn(gemma, "a100-40gb", MemoryMode::kFullFinetune);
  ASSERT_TRUE(fit.split.has_value());
  bool seen = false;
  for (const CostEstimate& c : gemma.cost) {
    if (c.card != "a100-40gb" || c.mode != MemoryMode::kFullFinetune) continue;
    seen = true;
    EXPECT_EQ(c.cards, fit.split->cards);
    EXPECT_NEAR(c.hours, 126.382304055, 1e-6);
    EXPECT_NEAR(c.usd, 126.382304055 * 1.29 * fit.split->cards, 1e-5);
  }
  EXPECT_TRUE(seen);
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
