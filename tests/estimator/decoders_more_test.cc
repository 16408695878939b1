// The second table of Llama-family rows (arch_llama_more.cc): gpt_oss, glm, glm4, glm4_moe,
// exaone4, olmo3, ernie4_5_moe, phimoe and hunyuan_v1_dense. Counts come from
// truth-decoders-{b,c}.json. Where no verbatim config.json was found, the test builds one from
// the dims the truth source itself quotes ("quoted_dims") plus the listed architecture keys
// ("structure_keys", each with its source); those configs are never saved as fixtures.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/checkpoint.h"
#include "estimator/checkpoint_graph.h"
#include "estimator/estimate.h"
#include "estimator/kv_cache.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::HeaderOf;
using testing::ModelConfigPath;
using testing::ReadJsonFixture;

nlohmann::json Truth(const std::string& repo) {
  for (const char* file : {"models/truth-decoders-c.json", "models/truth-decoders-b.json"}) {
    const nlohmann::json truth = ReadJsonFixture(file);
    if (truth.contains(repo)) return truth.at(repo);
  }
  ADD_FAILURE() << "no truth entry for " << repo;
  return nlohmann::json::object();
}

uint64_t Params(const std::string& repo) { return Truth(repo).at("params").get<uint64_t>(); }

// A config from truth-decoders-c.json's quoted_dims and structure_keys for `repo`.
nlohmann::json DimsConfig(const std::string& repo, const std::string& model_type) {
  const nlohmann::json truth = ReadJsonFixture("models/truth-decoders-c.json");
  const nlohmann::json& entry =
      truth.contains(repo) ? truth.at(repo) : truth.at("_dims_for_truth_decoders_b").at(repo);
  nlohmann::json config = entry.at("quoted_dims");
  if (entry.contains("structure_keys")) {
    for (auto it = entry.at("structure_keys").begin(); it != entry.at("structure_keys").end();
         ++it) {
      if (it.key() != "source") config[it.key()] = it.value();
    }
  }
  config["model_type"] = model_type;
  config["torch_dtype"] = "bfloat16";
  return config;
}

ModelGraph Build(const nlohmann::json& config) {
  Result<ModelGraph> g = BuildModelGraph(config);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(g).value() : ModelGraph{};
}

ParamCounts Counts(const ModelGraph& g) {
  Result<ParamCounts> c = CountParameters(g);
  EXPECT_TRUE(c.ok());
  return c.ok() ? *c : ParamCounts{};
}

// name -> the spec, every tensor the graph holds with {i}/{e} expanded.
std::map<std::string, TensorSpec> Tensors(const ModelGraph& g) {
  std::map<std::string, TensorSpec> out;
  ForEachTensor(g, [&](const std::string& name, const TensorSpec& spec, int64_t) {
    out.emplace(name, spec);
  });
  return out;
}

std::vector<int64_t> Shape(const std::map<std::string, TensorSpec>& t, const std::string& name) {
  auto it = t.find(name);
  EXPECT_NE(it, t.end()) << name;
  return it == t.end() ? std::vector<int64_t>{} : it->second.shape.ToVector();
}

// Bytes the checkpoint stores: every stored tensor at its own dtype (U8 blocks and scales, F32)
// or else BF16, the dtype of these checkpoints.
uint64_t StoredBytes(const ModelGraph& g) {
  uint64_t bytes = 0;
  ForEachTensorSpec(g, [&](const TensorSpec& t, uint64_t times) {
    if (!t.stored || t.role == TensorRole::kBuffer) return;
    const uint64_t size = t.dtype == "U8" ? 1 : t.dtype == "F32" ? 4 : 2;
    bytes += t.Elements().value() * size * times;
  });
  return bytes;
}

// gpt-oss-20b: the MXFP4 checkpoint's tensors are exactly those its index names, the bytes are
// its total_size, the parameters the BF16 upload's Hub count, and the Hub count of the MXFP4
// repo is those parameters plus the scale bytes (on disk, not parameters).
TEST(DecodersMore, GptOss20bIsTheIndexTensorByTensor) {
  const nlohmann::json truth = Truth("openai/gpt-oss-20b");
  const ModelGraph g = Build(ReadJsonFixture(ModelConfigPath("openai/gpt-oss-20b")));
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, truth.at("params").get<uint64_t>());
  EXPECT_EQ(c.total + c.extra_on_disk, truth.at("hub_safetensors_total").get<uint64_t>());
  EXPECT_EQ(StoredBytes(g), truth.at("index_total_size_bytes").get<uint64_t>());
  // The same through the estimate, whose bytes follow the graph's dtype: BF16 outside the
  // experts, though the config names no torch_dtype.
  EXPECT_EQ(g.dtype, "BF16");
  Result<Estimate> e = EstimateModel(ReadJsonFixture(ModelConfigPath("openai/gpt-oss-20b")), {});
  ASSERT_TRUE(e.ok());
  uint64_t estimate_bytes = 0;
  for (const auto& [dtype, bytes] : e->stored_bytes_by_dtype) estimate_bytes += bytes;
  EXPECT_EQ(estimate_bytes, truth.at("index_total_size_bytes").get<uint64_t>());
  EXPECT_EQ(c.embedding + c.attention + c.mlp + c.norm + c.head, c.total);
  // top-4 of 32 experts, each 2880 x 5760 + 5760 + 2880 x 2880 + 2880 parameters, 24 layers.
  EXPECT_EQ(c.total - c.active, uint64_t{24} * 28 * (2880 * 5760 + 5760 + 2880 * 2880 + 2880));

  const nlohmann::json index = ReadJsonFixture("models/openai__gpt-oss-20b.index.json");
  std::vector<std::string> indexed, modelled;
  for (auto it = index.at("weight_map").begin(); it != index.at("weight_map").end(); ++it) {
    indexed.push_back(it.key());
  }
  const std::map<std::string, TensorSpec> t = Tensors(g);
  for (const auto& [name, spec] : t) {
    if (spec.stored) modelled.push_back(name);
  }
  std::sort(indexed.begin(), indexed.end());
  EXPECT_EQ(modelled, indexed);

  const std::string mlp = "model.layers.0.mlp.experts.";
  EXPECT_EQ(Shape(t, mlp + "gate_up_proj_blocks"), (std::vector<int64_t>{32, 5760, 90, 16}));
  EXPECT_EQ(Shape(t, mlp + "gate_up_proj_scales"), (std::vector<int64_t>{32, 5760, 90}));
  EXPECT_EQ(Shape(t, mlp + "down_proj_blocks"), (std::vector<int64_t>{32, 2880, 90, 16}));
  EXPECT_EQ(Shape(t, mlp + "down_proj_bias"), (std::vector<int64_t>{32, 2880}));
  EXPECT_EQ(t.at(mlp + "gate_up_proj_blocks").packing, 2);
  EXPECT_EQ(t.at(mlp + "gate_up_proj_scales").role, TensorRole::kExtraOnDisk);
  EXPECT_EQ(Shape(t, "model.layers.0.mlp.router.bias"), (std::vector<int64_t>{32}));
  EXPECT_EQ(Shape(t, "model.layers.0.self_attn.sinks"), (std::vector<int64_t>{64}));
  EXPECT_TRUE(std::any_of(g.notes.begin(), g.notes.end(), [](const std::string& note) {
    return note.find("MXFP4 checkpoint") != std::string::npos;
  }));
  EXPECT_EQ(Shape(t, "model.layers.0.self_attn.o_proj.bias"), (std::vector<int64_t>{2880}));

  // layer_types: even layers slide over 128 tokens. 24 layers x 8 KV heads x (64 + 64) x 2 bytes
  // a token; a 4096-token sequence holds 12 layers' 4096 tokens and 12 layers' 128.
  const KvCache kv = ComputeKvCache(g, 4096, 2);
  const double per_layer = 8 * 128 * 2;
  EXPECT_EQ(kv.bytes_per_token, 24 * per_layer);
  EXPECT_EQ(kv.sliding_layers, 12);
  EXPECT_EQ(kv.bytes_per_sequence, 12 * per_layer * 4096 + 12 * per_layer * 128);
}

// The modelled gpt-oss-20b checkpoint, its header written tensor by tensor, matches the graph
// exactly; read back under a type nobody models, its MXFP4 blocks alone give the same params,
// the scales the same bytes on disk.
TEST(DecodersMore, GptOssHeaderMatchesAndReadsBackFromItsTensors) {
  nlohmann::json config = ReadJsonFixture(ModelConfigPath("openai/gpt-oss-20b"));
  const ModelGraph modelled = Build(config);
  const SafetensorsHeader header = HeaderOf(modelled);
  Result<CheckpointComparison> cmp = CompareWithCheckpoint(modelled, Counts(modelled), {header});
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(cmp->matched, cmp->checkpoint_tensors);
  EXPECT_EQ(cmp->parameter_delta, 0);
  EXPECT_EQ(cmp->extra_elements, 597196800u);  // the scales
  config["model_type"] = "not_modelled_gpt_oss";
  Result<ModelGraph> g = BuildGraphFromCheckpoint({header}, &config);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const ParamCounts want = Counts(modelled), got = Counts(*g);
  EXPECT_EQ(got.total, want.total);
  EXPECT_EQ(got.on_disk, want.on_disk);
  EXPECT_EQ(got.active, want.active);
}

// gpt-oss-120b: 36 layers of 128 experts; the Hub counts of the BF16 and the MXFP4 uploads.
// Without a quantization_config (a dequantized upload) the experts are plain BF16 parameters
// [E, in, out] under their transformers names, and the count is the same.
TEST(DecodersMore, GptOss120bAndItsDequantizedUpload) {
  const nlohmann::json truth = Truth("openai/gpt-oss-120b");
  nlohmann::json config = ReadJsonFixture(ModelConfigPath("openai/gpt-oss-120b"));
  const ParamCounts c = Counts(Build(config));
  EXPECT_EQ(c.total, truth.at("params").get<uint64_t>());
  EXPECT_EQ(c.total + c.extra_on_disk, truth.at("hub_safetensors_total").get<uint64_t>());

  config.erase("quantization_config");
  const ModelGraph bf16 = Build(config);
  const ParamCounts d = Counts(bf16);
  EXPECT_EQ(d.total, c.total);
  EXPECT_EQ(d.on_disk, d.total);
  EXPECT_EQ(d.active, c.active);
  const std::map<std::string, TensorSpec> t = Tensors(bf16);
  EXPECT_EQ(Shape(t, "model.layers.35.mlp.experts.gate_up_proj"),
            (std::vector<int64_t>{128, 2880, 5760}));
  EXPECT_EQ(Shape(t, "model.layers.35.mlp.experts.down_proj"),
            (std::vector<int64_t>{128, 2880, 2880}));
}

// glm (GlmForCausalLM, the released config) and glm4 (GLM-4-0414: the same dims plus two
// norms a layer, post_self_attn_layernorm and post_mlp_layernorm): 327,680 apart.
TEST(DecodersMore, GlmAndGlm4DifferByTwoNormsALayer) {
  const ModelGraph glm = Build(ReadJsonFixture(ModelConfigPath("THUDM/glm-4-9b-chat-hf")));
  EXPECT_EQ(Counts(glm).total, Params("THUDM/glm-4-9b-chat-hf"));
  const std::map<std::string, TensorSpec> t = Tensors(glm);
  EXPECT_EQ(Shape(t, "model.layers.0.mlp.gate_up_proj.weight"),
            (std::vector<int64_t>{27392, 4096}));
  EXPECT_EQ(Shape(t, "model.layers.39.self_attn.k_proj.bias"), (std::vector<int64_t>{256}));
  EXPECT_EQ(t.count("model.layers.0.self_attn.o_proj.bias"), 0u);
  EXPECT_EQ(t.count("model.layers.0.post_mlp_layernorm.weight"), 0u);

  const ModelGraph glm4 = Build(DimsConfig("zai-org/GLM-4-9B-0414", "glm4"));
  EXPECT_EQ(Counts(glm4).total, Params("zai-org/GLM-4-9B-0414"));
  const std::map<std::string, TensorSpec> t4 = Tensors(glm4);
  EXPECT_EQ(t4.count("model.layers.0.post_self_attn_layernorm.weight"), 1u);
  EXPECT_EQ(t4.count("model.layers.0.post_mlp_layernorm.weight"), 1u);
}

// GLM-4.5-Air: layer 0 dense, 45 MoE layers (128 routed + 1 shared expert of 1408, top-8,
// router weight + an fp32 score-correction buffer), and the MTP layer 46 stored but not loaded:
// params + buffers are the Hub count of a checkpoint without it (INTELLECT-3), on disk the Air's.
TEST(DecodersMore, Glm4MoeCountsTheMtpLayerOnDiskOnly) {
  const nlohmann::json truth = Truth("zai-org/GLM-4.5-Air");
  const ModelGraph g = Build(DimsConfig("zai-org/GLM-4.5-Air", "glm4_moe"));
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, truth.at("params").get<uint64_t>());
  EXPECT_EQ(c.buffers, truth.at("buffers").get<uint64_t>());
  EXPECT_EQ(c.total + c.buffers, truth.at("hub_total_same_shape").get<uint64_t>());
  EXPECT_EQ(c.on_disk, truth.at("on_disk_elements").get<uint64_t>());
  EXPECT_EQ(c.total - c.active, uint64_t{45} * 120 * 3 * 4096 * 1408);  // "12B active"
  const std::map<std::string, TensorSpec> t = Tensors(g);
  EXPECT_EQ(Shape(t, "model.layers.0.mlp.gate_proj.weight"), (std::vector<int64_t>{10944, 4096}));
  EXPECT_EQ(Shape(t, "model.layers.1.mlp.experts.127.down_proj.weight"),
            (std::vector<int64_t>{4096, 1408}));
  EXPECT_EQ(Shape(t, "model.layers.45.mlp.shared_experts.up_proj.weight"),
            (std::vector<int64_t>{1408, 4096}));
  EXPECT_EQ(t.at("model.layers.1.mlp.gate.e_score_correction_bias").role, TensorRole::kBuffer);
  EXPECT_EQ(t.at("model.layers.46.eh_proj.weight").role, TensorRole::kExtraOnDisk);
  EXPECT_EQ(t.at("model.layers.46.mlp.experts.0.up_proj.weight").role, TensorRole::kExtraOnDisk);
  EXPECT_EQ(Shape(t, "model.layers.46.shared_head.head.weight"),
            (std::vector<int64_t>{151552, 4096}));
  EXPECT_EQ(t.count("model.layers.1.self_attn.q_norm.weight"), 0u);  // use_qk_norm false
  EXPECT_EQ(g.layers.size(), 46u);
}

// EXAONE-4.0: post-norms and per-head q/k norms. The 1.2B attends globally (tied); the 32B
// slides 3 layers in 4 (LLLG) over 4096 tokens.
TEST(DecodersMore, Exaone4PostNormsAndItsLocalGlobalPattern) {
  const ModelGraph small = Build(DimsConfig("LGAI-EXAONE/EXAONE-4.0-1.2B", "exaone4"));
  EXPECT_EQ(Counts(small).total, Params("LGAI-EXAONE/EXAONE-4.0-1.2B"));
  EXPECT_EQ(ComputeKvCache(small, 4096, 2).sliding_layers, 0);
  const std::map<std::string, TensorSpec> t = Tensors(small);
  EXPECT_EQ(Shape(t, "model.layers.0.self_attn.q_norm.weight"), (std::vector<int64_t>{64}));
  EXPECT_EQ(t.count("model.layers.0.post_feedforward_layernorm.weight"), 1u);
  EXPECT_EQ(t.count("model.layers.0.input_layernorm.weight"), 0u);
  EXPECT_EQ(t.count("lm_head.weight"), 0u);

  const nlohmann::json big_config = DimsConfig("LGAI-EXAONE/EXAONE-4.0-32B", "exaone4");
  const ModelGraph big = Build(big_config);
  EXPECT_EQ(Counts(big).total, Params("LGAI-EXAONE/EXAONE-4.0-32B"));
  for (size_t i = 0; i < big.layers.size(); ++i) {
    EXPECT_EQ(big.layers[i].window, i % 4 == 3 ? 0 : 4096) << i;
  }
  nlohmann::json every_fourth = big_config;  // the integer form of the same pattern
  every_fourth["sliding_window_pattern"] = 4;
  EXPECT_EQ(ComputeKvCache(Build(every_fourth), 8192, 2).bytes_per_sequence,
            ComputeKvCache(big, 8192, 2).bytes_per_sequence);
}

// OLMo-3: OLMo-2's layout (full-width q/k norms after the projections, post-norms), 3 sliding
// layers of 4096 tokens to 1 full when layer_types is absent.
TEST(DecodersMore, Olmo3IsOlmo2WithSlidingLayers) {
  for (const char* repo : {"allenai/Olmo-3-1025-7B", "allenai/Olmo-3-1125-32B"}) {
    SCOPED_TRACE(repo);
    const ModelGraph g = Build(DimsConfig(repo, "olmo3"));
    EXPECT_EQ(Counts(g).total, Params(repo));
    EXPECT_EQ(ComputeKvCache(g, 4096, 2).sliding_layers,
              static_cast<int64_t>(g.layers.size() / 4 * 3));
    EXPECT_EQ(g.layers[3].window, 0);
    EXPECT_EQ(g.layers[4].window, 4096);
  }
  const std::map<std::string, TensorSpec> t =
      Tensors(Build(DimsConfig("allenai/Olmo-3-1125-32B", "olmo3")));
  EXPECT_EQ(Shape(t, "model.layers.0.self_attn.k_norm.weight"), (std::vector<int64_t>{1024}));
}

// ERNIE-4.5-21B-A3B: layer 0 dense (12288), then 27 layers of 64 experts (top-6) + 2 shared as
// one 3072-wide MLP, the router's fp32 statistics a [1, 64] parameter; tied.
TEST(DecodersMore, Ernie45MoeDenseFirstLayerThenExperts) {
  const std::string repo = "baidu/ERNIE-4.5-21B-A3B-Thinking";
  const ModelGraph g = Build(DimsConfig(repo, "ernie4_5_moe"));
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, Params(repo));
  EXPECT_EQ(c.total - c.active, uint64_t{27} * 58 * 3 * 2560 * 1536);
  const std::map<std::string, TensorSpec> t = Tensors(g);
  EXPECT_EQ(Shape(t, "model.layers.0.mlp.up_proj.weight"), (std::vector<int64_t>{12288, 2560}));
  EXPECT_EQ(Shape(t, "model.layers.27.mlp.shared_experts.down_proj.weight"),
            (std::vector<int64_t>{2560, 3072}));
  EXPECT_EQ(Shape(t, "model.layers.1.mlp.moe_statics.e_score_correction_bias"),
            (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(t.count("lm_head.weight"), 0u);
}

// Phi-3.5-MoE (no exact published count): LayerNorms with bias, biased attention and LM head,
// Mixtral's block_sparse_moe names; 41.9B / 6.6B by the structure, as the card rounds them.
TEST(DecodersMore, PhimoeStructure) {
  const ModelGraph g = Build(DimsConfig("microsoft/Phi-3.5-MoE-instruct", "phimoe"));
  const ParamCounts c = Counts(g);
  EXPECT_EQ((c.total + 50'000'000) / 100'000'000, 419u);
  EXPECT_EQ((c.active + 50'000'000) / 100'000'000, 66u);
  const std::map<std::string, TensorSpec> t = Tensors(g);
  EXPECT_EQ(Shape(t, "lm_head.bias"), (std::vector<int64_t>{32064}));
  EXPECT_EQ(Shape(t, "model.norm.bias"), (std::vector<int64_t>{4096}));
  EXPECT_EQ(Shape(t, "model.layers.0.block_sparse_moe.experts.15.w2.weight"),
            (std::vector<int64_t>{4096, 6400}));
  EXPECT_EQ(Shape(t, "model.layers.0.self_attn.o_proj.bias"), (std::vector<int64_t>{4096}));
}

// Hunyuan dense (no config or count found): HunYuanDenseV1Attention is LlamaAttention plus
// query_layernorm and key_layernorm of head_dim, whatever use_qk_norm says; its MLP has no bias.
// A small config of the keys HunYuanDenseV1Config reads, for the structure only.
TEST(DecodersMore, HunyuanDenseQueryKeyNorms) {
  const nlohmann::json config = {{"model_type", "hunyuan_v1_dense"},
                                 {"vocab_size", 1000},
                                 {"hidden_size", 256},
                                 {"num_hidden_layers", 2},
                                 {"num_attention_heads", 4},
                                 {"num_key_value_heads", 2},
                                 {"head_dim", 64},
                                 {"intermediate_size", 512},
                                 {"attention_bias", true},
                                 {"mlp_bias", true},
                                 {"use_qk_norm", false}};
  const std::map<std::string, TensorSpec> t = Tensors(Build(config));
  EXPECT_EQ(Shape(t, "model.layers.1.self_attn.query_layernorm.weight"),
            (std::vector<int64_t>{64}));
  EXPECT_EQ(Shape(t, "model.layers.1.self_attn.key_layernorm.weight"), (std::vector<int64_t>{64}));
  EXPECT_EQ(t.count("model.layers.1.self_attn.o_proj.bias"), 1u);
  EXPECT_EQ(t.count("model.layers.1.mlp.down_proj.bias"), 0u);
}

// Hostile values fail with one line instead of allocating.
TEST(DecodersMore, HugeValuesFailCleanly) {
  nlohmann::json config = ReadJsonFixture(ModelConfigPath("openai/gpt-oss-20b"));
  config["num_local_experts"] = 1000000;
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("num_local_experts"), std::string::npos);
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);

  nlohmann::json mtp = DimsConfig("zai-org/GLM-4.5-Air", "glm4_moe");
  mtp["num_nextn_predict_layers"] = 1000000000;
  EXPECT_FALSE(BuildModelGraph(mtp).ok());
  nlohmann::json ernie = DimsConfig("baidu/ERNIE-4.5-21B-A3B-Thinking", "ernie4_5_moe");
  ernie["moe_k"] = 65;  // more than the 64 experts
  EXPECT_FALSE(BuildModelGraph(ernie).ok());
  nlohmann::json odd = ReadJsonFixture(ModelConfigPath("openai/gpt-oss-20b"));
  odd["hidden_size"] = 2881;  // MXFP4 blocks of 32 cannot tile it
  EXPECT_FALSE(BuildModelGraph(odd).ok());
}

}  // namespace
}  // namespace hubwatch
