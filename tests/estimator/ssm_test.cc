// State-space and hybrid decoders (arch_ssm.cc, arch_ssm_hybrid.cc, arch_ssm_qwen.cc): counts
// against tests/fixtures/models/truth-ssm.json, tensor names and shapes of each layout, and the
// fixed state per sequence their mixers keep instead of a growing KV cache.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/checkpoint.h"
#include "estimator/checkpoint_graph.h"
#include "estimator/estimate.h"
#include "estimator/kv_cache.h"
#include "estimator/report.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::ReadFixture;
using testing::ReadJsonFixture;

nlohmann::json Truth(const std::string& repo) {
  const nlohmann::json truth = ReadJsonFixture("models/truth-ssm.json");
  EXPECT_TRUE(truth.contains(repo)) << repo;
  return truth.contains(repo) ? truth.at(repo) : nlohmann::json::object();
}

std::string ConfigText(const std::string& repo) {
  return ReadFixture("models/" + Truth(repo).at("config").get<std::string>());
}

// The whole estimate from config text (Mamba-Codestral's config holds Python's Infinity).
Estimate EstimateOf(const std::string& text, int64_t context = 4096) {
  EstimateInput in;
  in.workload.context = context;
  Result<Estimate> e = EstimateModelFromText(text, in);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.ok() ? std::move(e).value() : Estimate{};
}

Estimate EstimateRepo(const std::string& repo) { return EstimateOf(ConfigText(repo)); }

using Shape = std::vector<int64_t>;

// Every tensor the reference checkpoint stores under its expanded name ("{i}", "{e}"), as a
// checkpoint's index lists them.
class StoredTensors {
 public:
  explicit StoredTensors(const ModelGraph& g) {
    ForEachTensor(g, [&](const std::string& name, const TensorSpec& spec, int64_t) {
      if (spec.stored) shapes_.emplace(name, spec.shape.ToVector());
    });
  }
  bool Has(const std::string& name) const { return shapes_.contains(name); }
  size_t size() const { return shapes_.size(); }
  Shape operator[](const std::string& name) const {
    const auto it = shapes_.find(name);
    EXPECT_NE(it, shapes_.end()) << name;
    return it == shapes_.end() ? Shape{} : it->second;
  }

 private:
  std::map<std::string, Shape> shapes_;
};

void ExpectTotal(const Estimate& e, const std::string& repo) {
  const nlohmann::json truth = Truth(repo);
  EXPECT_EQ(e.params.total, truth.at("params").get<uint64_t>()) << repo;
  if (truth.contains("on_disk_elements")) {
    EXPECT_EQ(e.params.on_disk, truth.at("on_disk_elements").get<uint64_t>()) << repo;
  }
  const ParamCounts& p = e.params;
  EXPECT_EQ(p.embedding + p.attention + p.mlp + p.norm + p.head + p.other + p.mixer, p.total);
}

TEST(Ssm, MambaExactTiedWithAFixedState) {
  const Estimate e = EstimateRepo("state-spaces/mamba-2.8b-hf");
  ExpectTotal(e, "state-spaces/mamba-2.8b-hf");
  const ModelGraph& g = e.graph;
  const StoredTensors t(g);
  EXPECT_TRUE(g.tied);
  EXPECT_FALSE(t.Has("lm_head.weight"));
  EXPECT_EQ(t["backbone.embeddings.weight"], (Shape{50280, 2560}));
  EXPECT_EQ(t["backbone.layers.0.mixer.in_proj.weight"], (Shape{10240, 2560}));
  EXPECT_EQ(t["backbone.layers.0.mixer.conv1d.weight"], (Shape{5120, 1, 4}));
  EXPECT_EQ(t["backbone.layers.0.mixer.x_proj.weight"], (Shape{160 + 32, 5120}));
  EXPECT_EQ(t["backbone.layers.0.mixer.dt_proj.weight"], (Shape{5120, 160}));
  EXPECT_EQ(t["backbone.layers.0.mixer.A_log"], (Shape{5120, 16}));
  EXPECT_EQ(t["backbone.norm_f.weight"], (Shape{2560}));
  EXPECT_EQ(e.params.attention, 0u);

  // No K/V at all: per layer a conv state 5120 x 4 and an SSM state 5120 x 16, at 2 bytes.
  EXPECT_EQ(e.kv.bytes_per_token, 0);
  EXPECT_EQ(e.kv.cached_attention_layers, 0);
  EXPECT_EQ(e.kv.state_layers, 64);
  EXPECT_EQ(e.kv.state_bytes_per_sequence, 64.0 * 5120 * (4 + 16) * 2);
  EXPECT_EQ(e.kv.bytes_per_sequence, e.kv.state_bytes_per_sequence);
}

// The reports say it plainly: the text names the fixed state, the JSON carries it.
TEST(Ssm, ReportsNameTheFixedState) {
  const Estimate e = EstimateRepo("state-spaces/mamba-2.8b-hf");
  const std::string text = RenderText(e);
  EXPECT_NE(text.find("the KV cache becomes a fixed state per sequence: 12.5 MiB"),
            std::string::npos)
      << text;
  const nlohmann::json json = EstimateToJson(e);
  EXPECT_EQ(json.at("kv_cache").at("state_bytes_per_sequence").get<double>(), 13107200.0);
  EXPECT_EQ(json.at("kv_cache").at("state_layers").get<int64_t>(), 64);
  EXPECT_EQ(json.at("params").at("by_part").at("mixer").get<uint64_t>(), e.params.mixer);
}

// Serving a Mamba holds the same state per sequence at any context; a Llama's cache grows.
TEST(Ssm, ServingMemoryOfAMambaDoesNotGrowWithContextALlamasDoes) {
  auto serve_bytes = [](const std::string& text, int64_t context) {
    const Estimate e = EstimateOf(text, context);
    for (const MemoryPlan& p : e.memory) {
      if (p.mode == MemoryMode::kServe) return p.Bytes(MemoryItem::kKvCache);
    }
    ADD_FAILURE() << "no serving plan";
    return 0.0;
  };
  const std::string mamba = ConfigText("state-spaces/mamba-2.8b-hf");
  const std::string llama = ReadFixture("models/meta-llama__Meta-Llama-3-8B.config.json");
  EXPECT_GT(serve_bytes(mamba, 4096), 0);
  EXPECT_EQ(serve_bytes(mamba, 4096), serve_bytes(mamba, 65536));
  EXPECT_DOUBLE_EQ(serve_bytes(llama, 65536), 16 * serve_bytes(llama, 4096));
}

TEST(Ssm, Mamba2CodestralExactThroughPythonInfinity) {
  const Estimate e = EstimateRepo("mistralai/Mamba-Codestral-7B-v0.1");
  ExpectTotal(e, "mistralai/Mamba-Codestral-7B-v0.1");
  const ModelGraph& g = e.graph;
  const StoredTensors t(g);
  EXPECT_FALSE(g.tied);
  EXPECT_EQ(t["lm_head.weight"], (Shape{32768, 4096}));
  // in_proj: z 8192 + x 8192 + B, C 2 x 8 groups x 128 + dt 128 heads.
  EXPECT_EQ(t["backbone.layers.0.mixer.in_proj.weight"], (Shape{18560, 4096}));
  EXPECT_EQ(t["backbone.layers.0.mixer.conv1d.weight"], (Shape{10240, 1, 4}));
  EXPECT_EQ(t["backbone.layers.0.mixer.dt_bias"], (Shape{128}));
  EXPECT_EQ(t["backbone.layers.0.mixer.norm.weight"], (Shape{8192}));
  // Mamba2Cache: conv 10240 x 4 and SSM 128 heads x 64 x 128 per layer.
  EXPECT_EQ(e.kv.state_bytes_per_sequence, 64.0 * (10240 * 4 + 128 * 64 * 128) * 2);
}

TEST(Ssm, FalconMambaMatchesItsSiblingsIndex) {
  const Estimate e = EstimateRepo("tiiuae/falcon-mamba-7b-instruct");
  const StoredTensors t(e.graph);
  ExpectTotal(e, "tiiuae/falcon-mamba-7b-instruct");
  // intermediate_size 8192 wins over expand 16, as transformers' kwargs do.
  EXPECT_EQ(t["backbone.layers.0.mixer.out_proj.weight"], (Shape{4096, 8192}));
  EXPECT_EQ(t["lm_head.weight"], (Shape{65024, 4096}));
  EXPECT_FALSE(t.Has("backbone.layers.0.mixer.b_layernorm.weight"));
}

TEST(Ssm, Lfm2ExactShortConvAndAttention) {
  const Estimate e = EstimateRepo("LiquidAI/LFM2-1.2B");
  ExpectTotal(e, "LiquidAI/LFM2-1.2B");
  const ModelGraph& g = e.graph;
  const StoredTensors t(g);
  EXPECT_EQ(t["model.layers.0.conv.in_proj.weight"], (Shape{6144, 2048}));
  EXPECT_EQ(t["model.layers.0.conv.conv.weight"], (Shape{2048, 1, 3}));
  EXPECT_EQ(t["model.layers.2.self_attn.out_proj.weight"], (Shape{2048, 2048}));
  EXPECT_EQ(t["model.layers.2.self_attn.k_layernorm.weight"], (Shape{64}));
  EXPECT_EQ(t["model.layers.0.feed_forward.w1.weight"], (Shape{8192, 2048}));
  EXPECT_EQ(t["model.embedding_norm.weight"], (Shape{2048}));
  EXPECT_EQ(t.size(), 148u);  // the checkpoint's tensor count
  EXPECT_FALSE(t.Has("model.layers.2.conv.in_proj.weight"));
  EXPECT_FALSE(t.Has("lm_head.weight"));
  // 6 attention layers cache K/V (8 heads x 64, K + V); 10 conv layers a 2048 x 3 state.
  EXPECT_EQ(e.kv.cached_attention_layers, 6);
  EXPECT_EQ(e.kv.bytes_per_token, 6.0 * 8 * 128 * 2);
  EXPECT_EQ(e.kv.state_bytes_per_sequence, 10.0 * 2048 * 3 * 2);
  EXPECT_EQ(e.kv.bytes_per_sequence, e.kv.bytes_per_token * 4096 + e.kv.state_bytes_per_sequence);
}

TEST(Ssm, JambaLayersFollowTheirPeriods) {
  const Estimate e = EstimateRepo("ai21labs/Jamba-v0.1");
  ExpectTotal(e, "ai21labs/Jamba-v0.1");
  const ModelGraph& g = e.graph;
  const StoredTensors t(g);
  EXPECT_EQ(g.blocks.size(), 3u);  // Mamba + dense, Mamba + MoE, attention (even) + dense
  EXPECT_EQ(e.kv.cached_attention_layers, 4);
  EXPECT_EQ(e.kv.state_layers, 28);
  EXPECT_EQ(t["model.layers.0.mamba.dt_layernorm.weight"], (Shape{256}));
  EXPECT_EQ(t["model.layers.0.mamba.x_proj.weight"], (Shape{256 + 32, 8192}));
  EXPECT_EQ(t["model.layers.1.feed_forward.router.weight"], (Shape{16, 4096}));
  EXPECT_EQ(t["model.layers.1.feed_forward.experts.0.down_proj.weight"], (Shape{4096, 14336}));
  EXPECT_EQ(t["model.final_layernorm.weight"], (Shape{4096}));
  // Active: 16 MoE layers use 2 of 16 experts.
  EXPECT_EQ(e.params.total - e.params.active, 16ull * 14 * 3 * 4096 * 14336);
}

TEST(Ssm, BambaMamba2WithThreeAttentionLayers) {
  // Only "9.78B" is published (transformers' BambaConfig docs): the count must round to it.
  const Estimate e = EstimateRepo("ibm-fms/Bamba-9B");
  EXPECT_NEAR(static_cast<double>(e.params.total),
              Truth("ibm-fms/Bamba-9B").at("published_rounded").get<double>(), 5e6);
  const ModelGraph& g = e.graph;
  const StoredTensors t(g);
  EXPECT_EQ(e.kv.cached_attention_layers, 3);
  EXPECT_EQ(g.blocks[static_cast<size_t>(g.layers[9].block)].nodes[1].kind, NodeKind::kAttention);
  EXPECT_EQ(g.blocks[static_cast<size_t>(g.layers[8].block)].nodes[1].kind, NodeKind::kMixer);
  EXPECT_EQ(t["model.layers.0.mamba.in_proj.weight"], (Shape{16768, 4096}));
  EXPECT_EQ(t["model.layers.0.mamba.conv1d.weight"], (Shape{8448, 1, 4}));
  EXPECT_EQ(t["model.layers.9.self_attn.k_proj.weight"], (Shape{1024, 4096}));
  EXPECT_FALSE(t.Has("model.layers.9.mamba.in_proj.weight"));
  EXPECT_FALSE(t.Has("model.layers.8.self_attn.k_proj.weight"));
  EXPECT_EQ(t["model.layers.0.feed_forward.up_proj.weight"], (Shape{14336, 4096}));
}

TEST(Ssm, Qwen3NextExactOnDiskWithItsMtpBlockNotLoaded) {
  const Estimate e = EstimateRepo("Qwen/Qwen3-Next-80B-A3B-Instruct");
  ExpectTotal(e, "Qwen/Qwen3-Next-80B-A3B-Instruct");
  const ModelGraph& g = e.graph;
  const StoredTensors t(g);
  EXPECT_EQ(e.params.extra_on_disk, 1650471424u);
  EXPECT_EQ(e.kv.cached_attention_layers, 12);
  EXPECT_EQ(e.kv.state_layers, 36);
  EXPECT_EQ(g.blocks[static_cast<size_t>(g.layers[3].block)].nodes[1].kind, NodeKind::kAttention);
  EXPECT_EQ(t["model.layers.0.linear_attn.in_proj_qkvz.weight"], (Shape{12288, 2048}));
  EXPECT_EQ(t["model.layers.0.linear_attn.conv1d.weight"], (Shape{8192, 1, 4}));
  EXPECT_EQ(t["model.layers.3.self_attn.q_proj.weight"], (Shape{8192, 2048}));
  EXPECT_EQ(t["model.layers.3.self_attn.q_norm.weight"], (Shape{256}));
  EXPECT_FALSE(t.Has("model.layers.3.linear_attn.A_log"));
  EXPECT_EQ(t["model.layers.47.mlp.experts.511.down_proj.weight"], (Shape{2048, 512}));
  EXPECT_EQ(t["model.layers.0.mlp.shared_expert_gate.weight"], (Shape{1, 2048}));
  EXPECT_EQ(t["mtp.fc.weight"], (Shape{2048, 4096}));
  EXPECT_EQ(t["mtp.layers.0.mlp.experts.0.up_proj.weight"], (Shape{512, 2048}));
  // Delta-net state: conv 8192 x 4 + 32 value heads x 128 x 128, per layer.
  EXPECT_EQ(e.kv.state_bytes_per_sequence, 36.0 * (8192 * 4 + 32 * 128 * 128) * 2);
}

// Qwen3.5-MoE: the Qwen3-Next decoder under model.language_model (its delta net's projections
// split), a ViT under model.visual, the MTP block stored and not loaded.
TEST(Ssm, Qwen35MoeExactWithItsVisionTower) {
  const Estimate e = EstimateRepo("Qwen/Qwen3.5-35B-A3B");
  const StoredTensors t(e.graph);
  ExpectTotal(e, "Qwen/Qwen3.5-35B-A3B");
  ASSERT_EQ(e.params.by_section.size(), 2u);
  EXPECT_EQ(e.params.by_section[0], 34660610688u);  // text decoder
  EXPECT_EQ(e.params.by_section[1], 446571248u);    // vision tower
  EXPECT_EQ(e.graph.dtype, "BF16");                 // text_config's dtype
  EXPECT_EQ(e.params.extra_on_disk, 844640768u);
  EXPECT_EQ(t["model.visual.patch_embed.proj.weight"], (Shape{1152, 3, 2, 16, 16}));
  EXPECT_EQ(t["model.visual.blocks.26.attn.qkv.weight"], (Shape{3456, 1152}));
  EXPECT_EQ(t["model.visual.merger.linear_fc1.weight"], (Shape{4608, 4608}));
  EXPECT_EQ(t["model.language_model.layers.0.linear_attn.in_proj_qkv.weight"], (Shape{8192, 2048}));
  EXPECT_EQ(t["model.language_model.layers.0.linear_attn.in_proj_a.weight"], (Shape{32, 2048}));
  EXPECT_EQ(t["model.language_model.layers.3.self_attn.q_proj.weight"], (Shape{8192, 2048}));
  EXPECT_EQ(t["lm_head.weight"], (Shape{248320, 2048}));
  EXPECT_EQ(t["mtp.layers.0.mlp.shared_expert.up_proj.weight"], (Shape{512, 2048}));
  // The ViT keeps no cache; 10 text layers cache K/V, 30 keep a delta-net state.
  EXPECT_EQ(e.kv.cached_attention_layers, 10);
  EXPECT_EQ(e.kv.state_layers, 30);
}

// Each truth model's checkpoint, written tensor by tensor from its graph, compares exactly (what
// is stored beyond the parameters is the MTP block, nothing unexplained), and read back under a
// model_type nobody models gives the same counts (Qwen3.5's Conv3d weight has five dimensions).
TEST(Ssm, CheckpointsOfTheTruthModelsCompareExactly) {
  const nlohmann::json truth = ReadJsonFixture("models/truth-ssm.json");
  for (auto it = truth.begin(); it != truth.end(); ++it) {
    if (it.key().front() == '_') continue;
    SCOPED_TRACE(it.key());
    const Estimate e = EstimateRepo(it.key());
    const std::vector<SafetensorsHeader> headers = {testing::HeaderOf(e.graph)};
    Result<CheckpointComparison> c = CompareWithCheckpoint(e.graph, e.params, headers);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->parameter_delta, 0);
    EXPECT_TRUE(c->missing.empty());
    EXPECT_TRUE(c->shape_mismatches.empty());
    EXPECT_EQ(static_cast<uint64_t>(c->delta), e.params.extra_on_disk);

    std::string text = ConfigText(it.key());
    for (size_t at = text.find("Infinity"); at != std::string::npos; at = text.find("Infinity")) {
      text.replace(at, 8, "null");  // Mamba-Codestral's time_step_limit; strict JSON here
    }
    nlohmann::json config = nlohmann::json::parse(text);
    config["model_type"] = "not_modelled";
    Result<ModelGraph> g = BuildGraphFromCheckpoint(headers, &config);
    ASSERT_TRUE(g.ok()) << g.error().message;
    Result<ParamCounts> counts = CountParameters(*g);
    ASSERT_TRUE(counts.ok());
    // The tensors alone cannot tell that the MTP block is not loaded.
    EXPECT_EQ(counts->total, e.params.total + e.params.extra_on_disk);
    EXPECT_EQ(counts->on_disk, e.params.on_disk);
  }
}

// granitemoehybrid, structure only: no released config.json was found verbatim, so this is a
// made-up four-layer config in the shape of Granite-4.0-H's keys, counted by hand:
//   embedding 256 x 64 = 16,384 (tied)
//   Mamba-2 (inner 128, 8 heads of 16, 1 group, state 16, conv 4): in_proj (128 + 160 + 8) x 64
//     = 18,944; conv1d 160 x 4 + 160 = 800; dt_bias, A_log, D 24; norm 128; out_proj 8,192
//   attention (4 / 2 heads of 16): 4,096 + 2,048 + 2,048 + 4,096 = 12,288
//   MoE: router 4 x 64 = 256; input_linear 4 x 64 x 64 = 16,384; output_linear 4 x 64 x 32
//   shared_mlp: input_linear 96 x 64 = 6,144; output_linear 64 x 48 = 3,072; norms 2 x 64
//   3 x (28,088 + 24,832 + 9,216 + 128) + (12,288 + 24,832 + 9,216 + 128) + 16,384 + 64
TEST(Ssm, GraniteMoeHybridStructureOnly) {
  const nlohmann::json config = nlohmann::json::parse(R"({
    "architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid",
    "vocab_size": 256, "hidden_size": 64, "intermediate_size": 32, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2,
    "layer_types": ["mamba", "attention", "mamba", "mamba"], "position_embedding_type": "nope",
    "num_local_experts": 4, "num_experts_per_tok": 2, "shared_intermediate_size": 48,
    "mamba_n_heads": 8, "mamba_d_state": 16, "mamba_expand": 2, "mamba_d_conv": 4,
    "tie_word_embeddings": true, "torch_dtype": "bfloat16"})");
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_TRUE(g.ok()) << g.error().message;
  Result<ParamCounts> c = CountParameters(*g);
  ASSERT_TRUE(c.ok());
  const StoredTensors t(*g);
  EXPECT_EQ(c->total, 249704u);
  EXPECT_EQ(t["model.layers.0.mamba.in_proj.weight"], (Shape{296, 64}));
  EXPECT_EQ(t["model.layers.0.block_sparse_moe.input_linear.weight"], (Shape{4, 64, 64}));
  EXPECT_EQ(t["model.layers.0.shared_mlp.input_linear.weight"], (Shape{96, 64}));
  EXPECT_EQ(t["model.norm.weight"], (Shape{64}));
  const KvCache kv = ComputeKvCache(*g, 4096, 2);
  EXPECT_EQ(kv.cached_attention_layers, 1);
  EXPECT_EQ(kv.state_bytes_per_sequence, 3.0 * (160 * 4 + 8 * 16 * 16) * 2);
}

// falcon_h1, structure only (no released config.json was found verbatim): a made-up two-layer
// config with Falcon-H1's keys, counted by hand:
//   embedding and untied head 2 x 128 x 64 = 16,384
//   Mamba-2 (mamba_d_ssm 96, 6 heads of 16, state 8, 1 group, conv 4, gated norm): in_proj
//     (96 + 112 + 6) x 64 = 13,696; conv1d 112 x 4 + 112 = 560; dt_bias, A_log, D 18; norm 96;
//     out_proj 64 x 96 = 6,144
//   attention (4 / 2 heads of 16) 12,288; MLP 3 x 64 x 96 = 18,432; norms 2 x 64
//   2 x (20,514 + 12,288 + 18,432 + 128) + 16,384 + final norm 64 = 119,172
TEST(Ssm, FalconH1StructureOnly) {
  const nlohmann::json config = nlohmann::json::parse(R"({
    "architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1", "vocab_size": 128,
    "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "mamba_d_ssm": 96,
    "mamba_n_heads": 6, "mamba_d_head": 16, "mamba_d_state": 8, "mamba_n_groups": 1,
    "mamba_d_conv": 4, "mamba_rms_norm": true, "projectors_bias": false,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16"})");
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_TRUE(g.ok()) << g.error().message;
  Result<ParamCounts> c = CountParameters(*g);
  ASSERT_TRUE(c.ok());
  const StoredTensors t(*g);
  EXPECT_EQ(c->total, 119172u);
  EXPECT_EQ(c->buffers, 0u);  // mup_vector is not saved
  EXPECT_EQ(t["model.layers.1.mamba.in_proj.weight"], (Shape{214, 64}));
  EXPECT_EQ(t["model.layers.1.self_attn.k_proj.weight"], (Shape{32, 64}));
  EXPECT_FALSE(t.Has("model.layers.1.mamba.mup_vector"));
  const KvCache kv = ComputeKvCache(*g, 4096, 2);
  EXPECT_EQ(kv.cached_attention_layers, 2);
  EXPECT_EQ(kv.bytes_per_token, 2.0 * 2 * 16 * 2 * 2);
  EXPECT_EQ(kv.state_bytes_per_sequence, 2.0 * (112 * 4 + 6 * 16 * 8) * 2);
}

// A state size of 10^9 fails with one line naming the key, before anything is allocated.
TEST(Ssm, AHugeStateSizeFailsCleanly) {
  nlohmann::json config = nlohmann::json::parse(ConfigText("state-spaces/mamba-2.8b-hf"));
  config["state_size"] = 1000000000;
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("state_size"), std::string::npos) << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);

  nlohmann::json bamba = nlohmann::json::parse(ConfigText("ibm-fms/Bamba-9B"));
  bamba["mamba_n_heads"] = 100;  // 100 x 64 is not the inner width 8192
  EXPECT_FALSE(BuildModelGraph(bamba).ok());
  bamba = nlohmann::json::parse(ConfigText("ibm-fms/Bamba-9B"));
  bamba["attn_layer_indices"] = {9, 1000000000};
  EXPECT_FALSE(BuildModelGraph(bamba).ok());
}

}  // namespace
}  // namespace hubwatch
