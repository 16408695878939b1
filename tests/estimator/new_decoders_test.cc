// The Llama-like decoders added as rows of arch_llama.cc: qwen3_moe, olmoe, granite, granitemoe,
// smollm3, ernie4_5, cohere and cohere2. Every count asserted is a published figure from
// tests/fixtures/models/truth-decoders-{a,b}.json; derived figures (active parameters the truth
// does not give) are worked out in comments and checked only as relations between config values.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/kv_cache.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::ModelConfigPath;
using testing::ReadJsonFixture;

// The entry for `repo` in truth-decoders-a.json or truth-decoders-b.json.
nlohmann::json Truth(const std::string& repo) {
  for (const char* file : {"models/truth-decoders-a.json", "models/truth-decoders-b.json"}) {
    const nlohmann::json truth = ReadJsonFixture(file);
    if (truth.contains(repo)) return truth.at(repo);
  }
  ADD_FAILURE() << "no truth entry for " << repo;
  return nlohmann::json::object();
}

nlohmann::json Config(const std::string& repo) { return ReadJsonFixture(ModelConfigPath(repo)); }

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

// Every tensor the reference checkpoint stores, names expanded: name -> shape.
std::map<std::string, std::vector<int64_t>> StoredTensors(const ModelGraph& g) {
  std::map<std::string, std::vector<int64_t>> out;
  ForEachTensor(g, [&](const std::string& name, const TensorSpec& spec, int64_t) {
    if (spec.stored) out.emplace(name, spec.shape.ToVector());
  });
  return out;
}

// The tensor template named `name` ("model.layers.{i}.self_attn.q_norm.weight"), or null.
const TensorSpec* FindSpec(const ModelGraph& g, const std::string& name) {
  const TensorSpec* found = nullptr;
  auto visit = [&](const std::vector<Node>& nodes) {
    for (const Node& node : nodes) {
      for (const TensorSpec& t : node.tensors) {
        if (TensorName(node, t) == name) found = &t;
      }
    }
  };
  visit(g.embeddings);
  for (const BlockTemplate& b : g.blocks) visit(b.nodes);
  visit(g.final_nodes);
  return found;
}

std::vector<int64_t> ShapeOf(const ModelGraph& g, const std::string& name) {
  const TensorSpec* t = FindSpec(g, name);
  EXPECT_NE(t, nullptr) << name;
  return t ? t->shape.ToVector() : std::vector<int64_t>{};
}

const Node* MoeNode(const ModelGraph& g) {
  for (const BlockTemplate& b : g.blocks) {
    for (const Node& n : b.nodes) {
      if (n.kind == NodeKind::kMoe) return &n;
    }
  }
  return nullptr;
}

bool HasNote(const ModelGraph& g, const std::string& text) {
  for (const std::string& note : g.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

int64_t I(const nlohmann::json& config, const char* key) { return config.at(key).get<int64_t>(); }

// Qwen3-MoE: qwen3 attention (per-head q/k RMSNorm over head_dim 128), 128 routed experts of
// moe_intermediate_size, top-8, no shared expert. Both checkpoints are untied and store exactly
// the parameters (30B-A3B's index total_size / 2 bytes of BF16 is its count).
//
// Active, derived (the truth gives only the card's "3.3B" / "22B activated"): the total less
// (128 - 8) experts * 3 * hidden * moe_intermediate_size per layer:
//   30B-A3B: 30,532,122,624 - 48 * 120 * 3 * 2048 * 768 = 3,353,032,704
//   235B-A22B: 235,093,634,560 - 94 * 120 * 3 * 4096 * 1536 = 22,190,763,520
TEST(NewDecoders, Qwen3MoeExactWithoutASharedExpert) {
  for (const char* repo : {"Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B"}) {
    SCOPED_TRACE(repo);
    const nlohmann::json truth = Truth(repo);
    const nlohmann::json config = Config(repo);
    const ModelGraph g = Build(config);
    const ParamCounts c = Counts(g);
    EXPECT_EQ(c.total, truth.at("params").get<uint64_t>());
    EXPECT_EQ(c.on_disk, c.total);
    if (truth.contains("index_total_size_bytes")) {
      EXPECT_EQ(c.on_disk * 2, truth.at("index_total_size_bytes").get<uint64_t>());  // BF16
    }
    EXPECT_EQ(c.embedding + c.attention + c.mlp + c.norm + c.head, c.total);

    const int64_t layers = I(config, "num_hidden_layers"), hidden = I(config, "hidden_size");
    const int64_t experts = I(config, "num_experts"), top_k = I(config, "num_experts_per_tok");
    const int64_t moe_inter = I(config, "moe_intermediate_size");
    EXPECT_EQ(c.total - c.active,
              static_cast<uint64_t>(layers * (experts - top_k) * 3 * hidden * moe_inter));

    // Every layer sparse (mlp_only_layers empty, decoder_sparse_step 1); no shared expert.
    ASSERT_EQ(g.blocks.size(), 1u);
    const Node* moe = MoeNode(g);
    ASSERT_NE(moe, nullptr);
    EXPECT_EQ(moe->moe.experts, 128);
    EXPECT_EQ(moe->moe.top_k, 8);
    EXPECT_EQ(moe->moe.shared_intermediate, 0);
    for (const auto& [name, shape] : StoredTensors(g)) {
      EXPECT_EQ(name.find("shared_expert"), std::string::npos) << name;
    }
    const TensorSpec* down = FindSpec(g, "model.layers.{i}.mlp.experts.{e}.down_proj.weight");
    ASSERT_NE(down, nullptr);
    EXPECT_EQ(down->shape.ToVector(), (std::vector<int64_t>{hidden, moe_inter}));
    EXPECT_EQ(down->copies, 128);
    EXPECT_TRUE(down->routed);
    EXPECT_EQ(ShapeOf(g, "model.layers.{i}.mlp.gate.weight"),
              (std::vector<int64_t>{experts, hidden}));
    EXPECT_EQ(ShapeOf(g, "model.layers.{i}.self_attn.q_norm.weight"), (std::vector<int64_t>{128}));
    EXPECT_EQ(ShapeOf(g, "model.layers.{i}.self_attn.k_norm.weight"), (std::vector<int64_t>{128}));
    EXPECT_NE(FindSpec(g, "lm_head.weight"), nullptr);  // untied

    // KV cache: layers * 4 KV heads * (K 128 + V 128) * 2 bytes; no sliding window.
    const KvCache kv = ComputeKvCache(g, 4096, 2);
    EXPECT_EQ(kv.bytes_per_token, static_cast<double>(layers * 4 * (128 + 128) * 2));
    EXPECT_EQ(kv.sliding_layers, 0);
  }
}

// mlp_only_layers and decoder_sparse_step pick the dense layers, as in Qwen2-MoE; a dense layer's
// MLP has intermediate_size.
TEST(NewDecoders, Qwen3MoeDenseLayersFollowMlpOnlyLayersAndSparseStep) {
  nlohmann::json config = Config("Qwen/Qwen3-30B-A3B");
  config["mlp_only_layers"] = {0, 47};
  const ModelGraph g = Build(config);
  ASSERT_EQ(g.blocks.size(), 2u);
  EXPECT_EQ(g.layers[0].block, 1);
  EXPECT_EQ(g.layers[1].block, 0);
  EXPECT_EQ(g.layers[47].block, 1);
  const Node& dense = g.blocks[1].nodes.back();
  EXPECT_EQ(dense.kind, NodeKind::kMlp);
  EXPECT_EQ(dense.tensors[0].shape.ToVector(), (std::vector<int64_t>{6144, 2048}));
  // Each dense layer trades 128 experts (3 * 2048 * 768 each) and the router for 3 * 2048 * 6144.
  const uint64_t sparse_total = Counts(Build(Config("Qwen/Qwen3-30B-A3B"))).total;
  EXPECT_EQ(Counts(g).total, sparse_total - 2 * (uint64_t{128} * 3 * 2048 * 768 + 128u * 2048) +
                                 2 * (3u * 2048 * 6144));

  config.erase("mlp_only_layers");
  config["decoder_sparse_step"] = 2;  // layer i sparse when (i + 1) % 2 == 0
  const ModelGraph stepped = Build(config);
  EXPECT_EQ(stepped.layers[0].block, 1);
  EXPECT_EQ(stepped.layers[1].block, 0);
}

// OLMoE: q_norm and k_norm over the whole projected q / k (2048 each, not per head), 64 experts
// of intermediate_size 1024, top-8, no shared expert, no biases, untied. The published header
// parse gives 3219 tensors: 16 * (4 projections + 2 q/k norms + 2 norms + router + 64 * 3) + 3.
//
// Active, derived (the card says "1B activated"): 6,919,161,856 - 16 * (64 - 8) * 3 * 2048 * 1024
// = 1,282,017,280.
TEST(NewDecoders, OlmoeFullWidthQkNormAndSixtyFourExperts) {
  const char* repo = "allenai/OLMoE-1B-7B-0924";
  const nlohmann::json config = Config(repo);
  const ModelGraph g = Build(config);
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, Truth(repo).at("params").get<uint64_t>());
  EXPECT_EQ(c.on_disk, c.total);
  EXPECT_EQ(c.total - c.active, uint64_t{16} * (64 - 8) * 3 * 2048 * 1024);

  const std::map<std::string, std::vector<int64_t>> stored = StoredTensors(g);
  EXPECT_EQ(stored.size(), 3219u);
  EXPECT_EQ(stored.at("model.layers.15.self_attn.q_norm.weight"), (std::vector<int64_t>{2048}));
  EXPECT_EQ(stored.at("model.layers.15.self_attn.k_norm.weight"), (std::vector<int64_t>{2048}));
  EXPECT_EQ(stored.at("model.layers.0.mlp.gate.weight"), (std::vector<int64_t>{64, 2048}));
  EXPECT_EQ(stored.at("model.layers.0.mlp.experts.63.up_proj.weight"),
            (std::vector<int64_t>{1024, 2048}));
  EXPECT_TRUE(stored.count("lm_head.weight"));
  for (const auto& [name, shape] : stored) {
    EXPECT_EQ(name.find(".bias"), std::string::npos) << name;
  }
  const Node* moe = MoeNode(g);
  ASSERT_NE(moe, nullptr);
  EXPECT_EQ(moe->moe.experts, 64);
  EXPECT_EQ(moe->moe.top_k, 8);
  EXPECT_EQ(moe->moe.shared_intermediate, 0);
  // 16 layers * 16 KV heads * (128 + 128) * 2 bytes.
  EXPECT_EQ(ComputeKvCache(g, 4096, 2).bytes_per_token, 16.0 * 16 * 256 * 2);
}

// Granite: Llama's layout; embedding_multiplier, attention_multiplier, residual_multiplier and
// logits_scaling scale activations and hold no parameters. The truth for granite-3.0-2b-instruct
// is its same-shaped sibling granite-3.1-2b-instruct's published 2,533,531,648. granite-3.1-8b
// has no published count; the Hub totals of granite-3.3-{2b,8b}-instruct (2,533,539,840 and
// 8,170,864,640) are for the same shapes with vocab_size 49159 instead of 49155 (the truth
// notes), so both configs with that vocabulary must land on them exactly.
TEST(NewDecoders, GraniteCountsIgnoreItsMultipliers) {
  const nlohmann::json config = Config("ibm-granite/granite-3.0-2b-instruct");
  const ModelGraph g = Build(config);
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, Truth("ibm-granite/granite-3.0-2b-instruct").at("params").get<uint64_t>());
  EXPECT_EQ(c.on_disk, c.total);  // tied: no lm_head stored
  EXPECT_EQ(FindSpec(g, "lm_head.weight"), nullptr);
  EXPECT_EQ(ShapeOf(g, "model.layers.{i}.self_attn.k_proj.weight"),
            (std::vector<int64_t>{512, 2048}));  // 8 KV heads of 2048 / 32

  nlohmann::json plain = config;
  for (const char* key :
       {"embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling"}) {
    plain.erase(key);
  }
  EXPECT_EQ(Counts(Build(plain)).total, c.total);

  struct Sibling {
    const char* config_repo;
    uint64_t granite_3_3_total;  // truth-decoders-a.json, cross-check figures of the notes
  };
  for (const Sibling& s : {Sibling{"ibm-granite/granite-3.0-2b-instruct", 2533539840u},
                           Sibling{"ibm-granite/granite-3.1-8b-instruct", 8170864640u}}) {
    SCOPED_TRACE(s.config_repo);
    nlohmann::json v33 = Config(s.config_repo);
    v33["vocab_size"] = 49159;
    EXPECT_EQ(Counts(Build(v33)).total, s.granite_3_3_total);
  }
}

// Granite-MoE: each layer's 32 experts fused into block_sparse_moe.input_linear [32, 2 * 512,
// 1024] (gate and up) and output_linear [32, 1024, 512], a Linear router.layer [32, 1024];
// tied embeddings. The saved index (the F32 upload) names every tensor the checkpoint stores and
// its total_size / 4 bytes is the count.
//
// Active (the card says "400M active"): the fused tensors are routed along their first
// dimension, 8 of 32 slices a token: 1,334,628,352 - 24 * (32 - 8) * 3 * 1024 * 512 =
// 428,658,688, derived from the config, which is what the relation below checks.
TEST(NewDecoders, GraniteMoeFusedExpertsAreStoredAsTheIndexNamesThem) {
  const char* repo = "ibm-granite/granite-3.1-1b-a400m-instruct";
  const nlohmann::json truth = Truth(repo);
  const ModelGraph g = Build(Config(repo));
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, truth.at("params").get<uint64_t>());
  EXPECT_EQ(c.on_disk * 4, truth.at("index_total_size_bytes").get<uint64_t>());

  const nlohmann::json index =
      ReadJsonFixture("models/ibm-granite__granite-3.1-1b-a400m-instruct.index.json");
  std::vector<std::string> indexed, modelled;
  for (auto it = index.at("weight_map").begin(); it != index.at("weight_map").end(); ++it) {
    indexed.push_back(it.key());
  }
  const std::map<std::string, std::vector<int64_t>> stored = StoredTensors(g);
  for (const auto& [name, shape] : stored) modelled.push_back(name);
  std::sort(indexed.begin(), indexed.end());
  EXPECT_EQ(modelled, indexed);

  EXPECT_EQ(stored.at("model.layers.0.block_sparse_moe.input_linear.weight"),
            (std::vector<int64_t>{32, 1024, 1024}));
  EXPECT_EQ(stored.at("model.layers.0.block_sparse_moe.output_linear.weight"),
            (std::vector<int64_t>{32, 1024, 512}));
  EXPECT_EQ(stored.at("model.layers.0.block_sparse_moe.router.layer.weight"),
            (std::vector<int64_t>{32, 1024}));
  const Node* moe = MoeNode(g);
  ASSERT_NE(moe, nullptr);
  EXPECT_EQ(moe->moe.experts, 32);
  EXPECT_EQ(moe->moe.top_k, 8);
  EXPECT_EQ(moe->moe.expert_intermediate, 512);
  EXPECT_EQ(c.active, c.total - uint64_t{24} * (32 - 8) * 3 * 1024 * 512);
  // 24 layers * 8 KV heads * (64 + 64) * 2 bytes.
  EXPECT_EQ(ComputeKvCache(g, 4096, 2).bytes_per_token, 24.0 * 8 * 128 * 2);
}

// SmolLM3: Llama's layout with tied embeddings (no tie_word_embeddings key: SmolLM3Config's
// default) and NoPE layers, which hold no parameters. Its index's total_size / 2 bytes of BF16
// is the count.
TEST(NewDecoders, SmolLM3TiedWithNoPeLayers) {
  const char* repo = "HuggingFaceTB/SmolLM3-3B";
  const nlohmann::json truth = Truth(repo);
  const nlohmann::json config = Config(repo);
  const ModelGraph g = Build(config);
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, truth.at("params").get<uint64_t>());
  EXPECT_EQ(c.on_disk * 2, truth.at("index_total_size_bytes").get<uint64_t>());
  EXPECT_TRUE(g.tied);
  EXPECT_EQ(StoredTensors(g).count("lm_head.weight"), 0u);
  EXPECT_EQ(ShapeOf(g, "model.layers.{i}.self_attn.k_proj.weight"),
            (std::vector<int64_t>{512, 2048}));  // 4 KV heads of 2048 / 16
  const KvCache kv = ComputeKvCache(g, 65536, 2);
  EXPECT_EQ(kv.bytes_per_token, 36.0 * 4 * 256 * 2);
  EXPECT_EQ(kv.sliding_layers, 0);  // use_sliding_window false

  // With use_sliding_window, the NoPE layers (no_rope_layers 0: every 4th) slide, as the
  // layer_types SmolLM3Config derives say; without it nothing slides whatever layer_types says.
  nlohmann::json sliding = config;
  sliding.erase("layer_types");
  sliding["use_sliding_window"] = true;
  sliding["sliding_window"] = 4096;
  const ModelGraph s = Build(sliding);
  EXPECT_EQ(s.layers[0].window, 0);
  EXPECT_EQ(s.layers[3].window, 4096);
  EXPECT_EQ(s.layers[35].window, 4096);
  EXPECT_EQ(ComputeKvCache(s, 65536, 2).sliding_layers, 9);
  EXPECT_EQ(Counts(s).total, c.total);
  nlohmann::json typed = config;
  typed["sliding_window"] = 4096;
  typed["layer_types"][3] = "sliding_attention";
  EXPECT_EQ(ComputeKvCache(Build(typed), 65536, 2).sliding_layers, 0);
}

// ERNIE-4.5-0.3B: Llama's layout with head_dim 128 given explicitly, so q is 16 * 128 = 2048 wide
// on a hidden size of 1024; use_bias false, tied embeddings. The truth is a printed count for the
// architecture (18 layers, d=1024) that this config reproduces.
TEST(NewDecoders, Ernie45HeadsWiderThanHidden) {
  const char* repo = "baidu/ERNIE-4.5-0.3B-Base-PT";
  const nlohmann::json config = Config(repo);
  const ModelGraph g = Build(config);
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, Truth(repo).at("params").get<uint64_t>());
  EXPECT_EQ(ShapeOf(g, "model.layers.{i}.self_attn.q_proj.weight"),
            (std::vector<int64_t>{2048, 1024}));
  EXPECT_EQ(ShapeOf(g, "model.layers.{i}.self_attn.o_proj.weight"),
            (std::vector<int64_t>{1024, 2048}));
  EXPECT_EQ(FindSpec(g, "lm_head.weight"), nullptr);
  for (const auto& [name, shape] : StoredTensors(g)) {
    EXPECT_EQ(name.find(".bias"), std::string::npos) << name;
  }
  // use_bias puts a bias on all seven linears of each layer: q 2048, k 256, v 256, o 1024,
  // gate 3072, up 3072, down 1024.
  nlohmann::json biased = config;
  biased["use_bias"] = true;
  EXPECT_EQ(Counts(Build(biased)).total,
            c.total + 18u * (2048 + 256 + 256 + 1024 + 3072 * 2 + 1024));
  EXPECT_EQ(ComputeKvCache(g, 4096, 2).bytes_per_token, 18.0 * 2 * 256 * 2);
}

// Cohere (aya-expanse-8b shapes, luie-v0.1 being its fine-tune): one LayerNorm with a weight and
// no bias per layer, whose output feeds attention and the SwiGLU MLP in parallel; tied
// embeddings (CohereConfig's default); logit_scale holds no parameter. The truth is
// aya-expanse-8b's published 8,028,033,024.
TEST(NewDecoders, CohereParallelBlockWithOneBiasFreeLayerNorm) {
  const char* repo = "chnaaam/luie-v0.1";
  const nlohmann::json config = Config(repo);
  const ModelGraph g = Build(config);
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, Truth(repo).at("params").get<uint64_t>());
  EXPECT_EQ(c.on_disk, c.total);
  EXPECT_TRUE(g.tied);

  ASSERT_EQ(g.blocks.size(), 1u);
  const std::vector<Node>& nodes = g.blocks[0].nodes;
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].module, "model.layers.{i}.input_layernorm");
  EXPECT_EQ(nodes[0].norm, NormKind::kLayer);
  ASSERT_EQ(nodes[0].tensors.size(), 1u);
  EXPECT_EQ(nodes[0].tensors[0].name, "weight");
  EXPECT_EQ(nodes[1].kind, NodeKind::kAttention);
  EXPECT_EQ(nodes[2].kind, NodeKind::kMlp);
  EXPECT_FALSE(nodes[2].saves_input);              // shares the norm's output with attention
  EXPECT_EQ(g.final_nodes[0].tensors.size(), 1u);  // model.norm: weight only
  EXPECT_EQ(FindSpec(g, "model.layers.{i}.self_attn.q_norm.weight"), nullptr);

  // use_qk_norm adds a LayerNorm weight per head: [32, 128] for q and [8, 128] for k.
  nlohmann::json qk = config;
  qk["use_qk_norm"] = true;
  const ModelGraph q = Build(qk);
  EXPECT_EQ(ShapeOf(q, "model.layers.{i}.self_attn.q_norm.weight"),
            (std::vector<int64_t>{32, 128}));
  EXPECT_EQ(ShapeOf(q, "model.layers.{i}.self_attn.k_norm.weight"), (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(Counts(q).total, c.total + 32u * (32 + 8) * 128);
  // 32 layers * 8 KV heads * (128 + 128) * 2 bytes.
  EXPECT_EQ(ComputeKvCache(g, 8192, 2).bytes_per_token, 32.0 * 8 * 256 * 2);
}

// Cohere2 (command-r7b): Cohere's layers, every sliding_window_pattern-th (4th) one global and the
// others sliding over 4096 tokens; the split adds no parameters, so the count is aya-expanse-8b's
// published 8,028,033,024 (the truth notes: same shapes; none is published for command-r7b).
TEST(NewDecoders, Cohere2EveryFourthLayerGlobal) {
  const nlohmann::json config = Config("huihui-ai/c4ai-command-r7b-12-2024-abliterated");
  const ModelGraph g = Build(config);
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, Truth("chnaaam/luie-v0.1").at("params").get<uint64_t>());
  EXPECT_TRUE(g.tied);  // no tie_word_embeddings key: Cohere2Config's default
  ASSERT_EQ(g.layers.size(), 32u);
  for (size_t i = 0; i < g.layers.size(); ++i) {
    EXPECT_EQ(g.layers[i].window, i % 4 == 3 ? 0 : 4096) << i;
  }
  ASSERT_EQ(g.blocks[0].nodes.size(), 3u);
  EXPECT_FALSE(g.blocks[0].nodes[2].saves_input);

  // Per token 32 layers * 8 KV heads * 256 * 2 bytes = 4096 bytes a layer; at 8192 tokens the 8
  // global layers hold all of them and the 24 sliding ones 4096.
  const KvCache kv = ComputeKvCache(g, 8192, 2);
  EXPECT_EQ(kv.bytes_per_token, 32.0 * 4096);
  EXPECT_EQ(kv.sliding_layers, 24);
  EXPECT_EQ(kv.bytes_per_sequence, (8.0 * 8192 + 24.0 * 4096) * 4096);

  // Without the keys, Cohere2Config's defaults: pattern 4, window 4096 (noted).
  nlohmann::json bare = config;
  bare.erase("sliding_window_pattern");
  bare.erase("sliding_window");
  const ModelGraph d = Build(bare);
  EXPECT_EQ(d.layers[2].window, 4096);
  EXPECT_EQ(d.layers[3].window, 0);
  EXPECT_TRUE(HasNote(d, "sliding_window absent"));
  // layer_types, where given, decides.
  nlohmann::json typed = config;
  typed["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 32; ++i) {
    typed["layer_types"].push_back(i < 16 ? "sliding_attention" : "full_attention");
  }
  const ModelGraph t = Build(typed);
  EXPECT_EQ(t.layers[3].window, 4096);
  EXPECT_EQ(t.layers[16].window, 0);
}

TEST(NewDecoders, DenseFamiliesHaveEveryParameterActive) {
  for (const char* repo : {"ibm-granite/granite-3.0-2b-instruct", "HuggingFaceTB/SmolLM3-3B",
                           "baidu/ERNIE-4.5-0.3B-Base-PT", "chnaaam/luie-v0.1",
                           "huihui-ai/c4ai-command-r7b-12-2024-abliterated"}) {
    SCOPED_TRACE(repo);
    const ParamCounts c = Counts(Build(Config(repo)));
    EXPECT_EQ(c.active, c.total);
  }
}

}  // namespace
}  // namespace hubwatch
