// Estimates from a checkpoint's own tensors (estimator/checkpoint_graph.h): for an architecture
// that is not modelled, the counts come from the stored tensors and must be exact; the memory
// and KV cache read the config's generic keys.

#include "estimator/checkpoint_graph.h"

#include <gtest/gtest.h>

#include "estimator/estimate.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::HeaderOf;
using testing::ModelConfigPath;
using testing::ReadFixture;
using testing::ReadJsonFixture;

ModelGraph Modelled(const nlohmann::json& config) {
  Result<ModelGraph> g = BuildModelGraph(config);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(g).value() : ModelGraph{};
}

ParamCounts Counts(const ModelGraph& g) {
  Result<ParamCounts> c = CountParameters(g);
  EXPECT_TRUE(c.ok());
  return c.ok() ? *c : ParamCounts{};
}

// Every modelled fixture, its checkpoint written tensor by tensor from the modelled graph, then
// read back as an architecture nobody models: the tensors alone give the same parameters, the
// same stored elements and buffers, and (from the generic config keys) the same KV cache per
// token, except where the modelled cache is a latent (MLA), which the tensors cannot tell.
TEST(CheckpointGraph, TheTensorsAloneGiveTheModelledCountsOfEveryFixture) {
  int checked = 0;
  for (const char* file : {"models/ground-truth.json", "models/more-truth.json"}) {
    const nlohmann::json truth = ReadJsonFixture(file);
    for (auto it = truth.begin(); it != truth.end(); ++it) {
      if (it.key().front() == '_') continue;
      SCOPED_TRACE(it.key());
      nlohmann::json config = ReadJsonFixture(ModelConfigPath(it.key()));
      const ModelGraph modelled = Modelled(config);
      const ParamCounts want = Counts(modelled);
      config["model_type"] = "not_modelled_" + config.value("model_type", std::string());
      Result<ModelGraph> g = BuildGraphFromCheckpoint({HeaderOf(modelled)}, &config);
      ASSERT_TRUE(g.ok()) << g.error().message;
      EXPECT_EQ(g->source, GraphSource::kCheckpointTensors);
      const ParamCounts got = Counts(*g);
      // A head stored although the architecture ties it (falcon's default, which its config
      // does not spell out) reads as a parameter: the graph's note says so and by how much.
      EXPECT_EQ(got.total, want.total + want.tied_copies);
      EXPECT_EQ(got.on_disk, want.on_disk);
      EXPECT_EQ(got.buffers, want.buffers);
      EXPECT_EQ(got.embedding + got.attention + got.mlp + got.norm + got.head + got.other,
                got.total);
      if (want.active != want.total) {
        EXPECT_EQ(got.active, want.active) << "top-k from config";
      }
      EXPECT_EQ(g->tied, modelled.tied && want.tied_copies == 0);
      EXPECT_EQ(g->layers.size(), modelled.layers.size());
      const KvCache kv_want = ComputeKvCache(modelled, 4096, 2);
      const KvCache kv_got = ComputeKvCache(*g, 4096, 2);
      if (!kv_want.latent) {
        EXPECT_EQ(kv_got.bytes_per_token, kv_want.bytes_per_token);
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 23);
}

// The real gpt2 checkpoint's header (its causal-mask buffers stored in every layer, its head
// tied and not stored) under a model_type nobody models: gpt2's published 124,439,808 parameters
// and the Hub's 137,022,720 stored elements.
TEST(CheckpointGraph, Gpt2HeaderUnderAnUnknownModelType) {
  Result<SafetensorsHeader> header =
      ParseSafetensorsHeader(ReadFixture("safetensors/gpt2.header.json"));
  ASSERT_TRUE(header.ok());
  nlohmann::json config = ReadJsonFixture(ModelConfigPath("openai-community/gpt2"));
  config["model_type"] = "gpt2_remote_code";
  EstimateInput input;
  input.headers = {*header};
  Result<Estimate> e = EstimateModel(config, input);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->graph.source, GraphSource::kCheckpointTensors);
  EXPECT_EQ(e->params.total, 124439808u);
  EXPECT_EQ(e->params.on_disk, 137022720u);
  EXPECT_EQ(e->params.buffers, 12u * 1024 * 1024);
  EXPECT_TRUE(e->graph.tied);
  EXPECT_EQ(e->kv.bytes_per_token, 36864);  // 12 layers x 2 x 768 x 2 bytes
  EXPECT_FALSE(e->checkpoint.has_value()) << "the graph is the checkpoint: nothing to compare";
  ASSERT_EQ(e->memory.size(), 4u);
  for (const MemoryPlan& plan : e->memory) EXPECT_GT(plan.TotalAt(1), 0) << plan.name();
  EXPECT_GT(e->lora_params, 0u) << "LoRA on the 2-D weights found by name and shape";
  // Without config.json at all: the same counts; nothing says it generates (no head stored,
  // no class name), so it reads as an encoder, with no KV cache.
  Result<ModelGraph> bare = BuildGraphFromCheckpoint({*header}, nullptr);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(Counts(*bare).total, 124439808u);
  EXPECT_FALSE(bare->decodes);
  EXPECT_EQ(ComputeKvCache(*bare, 1024, 2).bytes_per_token, 0);
}

// Packed quantized tensors count the parameters they hold; their metadata is stored, not
// counted: a GPTQ 4-bit linear [64 -> 128] stores qweight [8, 128] int32 plus qzeros, scales
// and g_idx; an MXFP4 expert block [2 experts, 128 out, 64 in] stores [2, 128, 2, 16] bytes
// plus [2, 128, 2] scales.
TEST(CheckpointGraph, PackedTensorsCountWhatTheyHold) {
  auto tensor = [](const char* dtype, std::vector<int64_t> shape) {
    SafetensorsTensor t;
    t.dtype = dtype;
    t.shape = shape;
    t.elements = 1;
    for (int64_t d : shape) t.elements *= static_cast<uint64_t>(d);
    return t;
  };
  SafetensorsHeader h;
  h.tensors["model.layers.0.mlp.up_proj.qweight"] = tensor("I32", {8, 128});
  h.tensors["model.layers.0.mlp.up_proj.qzeros"] = tensor("I32", {1, 16});
  h.tensors["model.layers.0.mlp.up_proj.scales"] = tensor("F16", {1, 128});
  h.tensors["model.layers.0.mlp.up_proj.g_idx"] = tensor("I32", {64});
  h.tensors["model.layers.0.mlp.experts.gate_up_proj_blocks"] = tensor("U8", {2, 128, 2, 16});
  h.tensors["model.layers.0.mlp.experts.gate_up_proj_scales"] = tensor("U8", {2, 128, 2});
  h.tensors["model.embed_tokens.weight"] = tensor("BF16", {100, 64});
  const nlohmann::json config = {{"quantization_config", {{"quant_method", "gptq"}, {"bits", 4}}}};
  Result<ModelGraph> g = BuildGraphFromCheckpoint({h}, &config);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const ParamCounts c = Counts(*g);
  EXPECT_EQ(c.total, 64u * 128 + 2u * 128 * 64 + 100u * 64);
  EXPECT_EQ(c.extra_on_disk, 16u + 128 + 64 + 2u * 128 * 2);
  EXPECT_EQ(c.on_disk, 8u * 128 + 16 + 128 + 64 + 2u * 128 * 2 * 16 + 2u * 128 * 2 + 100u * 64);
  bool found = false;
  for (const Node& n : g->blocks[0].nodes) {
    for (const TensorSpec& t : n.tensors) {
      if (t.name != "mlp.up_proj.qweight") continue;
      found = true;
      EXPECT_EQ(t.linear_in, 64);
      EXPECT_EQ(t.linear_out, 128);
    }
  }
  EXPECT_TRUE(found);
}

// Experts numbered under "experts.N." fold into one template with copies; the config's top-k
// makes the active count exact. Layers with the same tensors share one block.
TEST(CheckpointGraph, ExpertsFoldAndTopKFromTheConfig) {
  const nlohmann::json config = ReadJsonFixture(ModelConfigPath("mistralai/Mixtral-8x7B-v0.1"));
  const ModelGraph modelled = Modelled(config);
  nlohmann::json unknown = config;
  unknown["model_type"] = "mixtral_fork";
  Result<ModelGraph> g = BuildGraphFromCheckpoint({HeaderOf(modelled)}, &unknown);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->blocks.size(), 1u) << "32 identical layers, one template";
  EXPECT_EQ(Counts(*g).active, 12879925248u);  // published: 2 of 8 experts
  unknown.erase("num_experts_per_tok");
  Result<ModelGraph> no_top_k = BuildGraphFromCheckpoint({HeaderOf(modelled)}, &unknown);
  ASSERT_TRUE(no_top_k.ok());
  EXPECT_EQ(Counts(*no_top_k).active, Counts(*no_top_k).total);
  bool said = false;
  for (const std::string& note : no_top_k->notes) said |= note.find("num_experts_per_tok") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(CheckpointGraph, BadCheckpointsAreErrors) {
  EXPECT_FALSE(BuildGraphFromCheckpoint({}, nullptr).ok());
  SafetensorsHeader a;
  SafetensorsTensor t;
  t.dtype = "BF16";
  t.shape = {4};
  t.elements = 4;
  a.tensors["x.weight"] = t;
  Result<ModelGraph> twice = BuildGraphFromCheckpoint({a, a}, nullptr);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("stored in two shards"), std::string::npos);
  // A config whose generic keys are nonsense does not stop the tensors being counted.
  const nlohmann::json bad = {{"num_hidden_layers", 1e9}, {"hidden_size", "wide"}};
  Result<ModelGraph> g = BuildGraphFromCheckpoint({a}, &bad);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Counts(*g).total, 4u);
}

}  // namespace
}  // namespace hubwatch
