// The classic GPT-style decoders (estimator/arch_classic.cc): opt, bloom, gptj, gpt_bigcode, mpt
// and stablelm. Every count asserted is read from tests/fixtures/models/truth-decoders-b.json
// (or quoted from its notes); KV bytes per token are derived from the published config in a
// comment beside each; the structural assertions catch what a right total could hide.

#include <gtest/gtest.h>

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

ModelGraph Build(const nlohmann::json& config) {
  Result<ModelGraph> g = BuildModelGraph(config);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(g).value() : ModelGraph{};
}

ModelGraph BuildRepo(const std::string& repo) {
  return Build(ReadJsonFixture(ModelConfigPath(repo)));
}

ParamCounts Counts(const ModelGraph& g) {
  Result<ParamCounts> c = CountParameters(g);
  EXPECT_TRUE(c.ok());
  return c.ok() ? *c : ParamCounts{};
}

const nlohmann::json& Truth(const std::string& repo) {
  static const nlohmann::json truth = ReadJsonFixture("models/truth-decoders-b.json");
  return truth.at(repo);
}

// Every tensor's expanded checkpoint name and shape.
std::map<std::string, const TensorSpec*> Tensors(const ModelGraph& g) {
  std::map<std::string, const TensorSpec*> tensors;
  ForEachTensor(g,
                [&](const std::string& name, const TensorSpec& t, int64_t) { tensors[name] = &t; });
  return tensors;
}

void ExpectShapes(const ModelGraph& g,
                  const std::map<std::string, std::vector<int64_t>>& expected) {
  const std::map<std::string, const TensorSpec*> tensors = Tensors(g);
  for (const auto& [name, shape] : expected) {
    auto it = tensors.find(name);
    ASSERT_NE(it, tensors.end()) << name;
    EXPECT_EQ(it->second->shape.ToVector(), shape) << name;
  }
}

void ExpectAbsent(const ModelGraph& g, const std::vector<std::string>& names) {
  const std::map<std::string, const TensorSpec*> tensors = Tensors(g);
  for (const std::string& name : names) EXPECT_EQ(tensors.count(name), 0u) << name;
}

// The parts of a count add up to its total.
void ExpectPartsSum(const ParamCounts& c) {
  EXPECT_EQ(c.embedding + c.attention + c.mlp + c.norm + c.head + c.other, c.total);
}

double KvBytesPerToken(const ModelGraph& g) { return ComputeKvCache(g, 1, 2).bytes_per_token; }

const AttentionShape& Attention(const ModelGraph& g) {
  for (const Node& n : g.blocks.at(0).nodes) {
    if (n.kind == NodeKind::kAttention) return n.attention;
  }
  ADD_FAILURE() << "no attention node";
  static const AttentionShape none;
  return none;
}

// facebook/opt-125m: the truth is sum(p.numel()) of OPTForCausalLM, lm_head tied and counted
// once. Whether the .bin also stores lm_head.weight was not checked (notes), so on_disk is not
// asserted.
TEST(ClassicDecoders, Opt125mIsExact) {
  const ModelGraph g = BuildRepo("facebook/opt-125m");
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, Truth("facebook/opt-125m").at("params").get<uint64_t>());
  ExpectPartsSum(c);
  EXPECT_TRUE(g.tied);
  EXPECT_EQ(g.max_positions, 2048);
  // Positions have max_position_embeddings + 2 rows (the OPT offset); the MLP is fc1/fc2 in the
  // layer itself; a pre-norm model ends with final_layer_norm; no projections at 768 == 768.
  ExpectShapes(g, {{"model.decoder.embed_tokens.weight", {50272, 768}},
                   {"model.decoder.embed_positions.weight", {2050, 768}},
                   {"model.decoder.layers.0.self_attn.q_proj.bias", {768}},
                   {"model.decoder.layers.0.self_attn.out_proj.weight", {768, 768}},
                   {"model.decoder.layers.0.self_attn_layer_norm.bias", {768}},
                   {"model.decoder.layers.11.fc1.weight", {3072, 768}},
                   {"model.decoder.layers.11.fc2.bias", {768}},
                   {"model.decoder.layers.11.final_layer_norm.weight", {768}},
                   {"model.decoder.final_layer_norm.bias", {768}}});
  ExpectAbsent(
      g, {"model.decoder.project_in.weight", "model.decoder.project_out.weight", "lm_head.weight"});
  // Pre-norm: the attention's LayerNorm comes before it.
  EXPECT_EQ(g.blocks[0].nodes[0].module, "model.decoder.layers.{i}.self_attn_layer_norm");
  // fp16 K and V: 12 layers x 2 x 12 heads x 64 x 2 bytes.
  EXPECT_EQ(KvBytesPerToken(g), 12 * 2 * 12 * 64 * 2);
}

// opt-350m's layout on opt-125m's sizes: word_embed_proj_dim below hidden_size adds
// project_in/out (no bias), and a post-norm model (do_layer_norm_before false) puts each norm
// after its sublayer and has no final_layer_norm.
TEST(ClassicDecoders, OptProjectionsAndPostNorm) {
  nlohmann::json config = ReadJsonFixture(ModelConfigPath("facebook/opt-125m"));
  config["word_embed_proj_dim"] = 512;
  config["do_layer_norm_before"] = false;
  const ModelGraph g = Build(config);
  ExpectShapes(g, {{"model.decoder.embed_tokens.weight", {50272, 512}},
                   {"model.decoder.project_in.weight", {768, 512}},
                   {"model.decoder.project_out.weight", {512, 768}},
                   {"model.decoder.embed_positions.weight", {2050, 768}}});
  ExpectAbsent(g, {"model.decoder.project_in.bias", "model.decoder.final_layer_norm.weight"});
  EXPECT_EQ(g.blocks[0].nodes[0].kind, NodeKind::kAttention);
  EXPECT_EQ(g.blocks[0].nodes[1].module, "model.decoder.layers.{i}.self_attn_layer_norm");
  // The head reads the projected width; it stays the last final node.
  EXPECT_EQ(g.final_nodes.back().module, "lm_head");
  EXPECT_EQ(g.final_nodes.back().input_width, 512);
}

// bigscience/bloom-560m (a printed config: hidden_size, n_head, n_layer) and its fine-tune
// bigscience/bloomz-560m (the original file: n_embed, num_attention_heads) are the same shapes:
// both truths are 559,214,592, the model card's count and the Hub's safetensors total, with the
// head tied and stored once (so on_disk is the same figure).
TEST(ClassicDecoders, Bloom560mIsExactInBothConfigFormats) {
  for (const char* repo : {"bigscience/bloom-560m", "bigscience/bloomz-560m"}) {
    SCOPED_TRACE(repo);
    const ModelGraph g = BuildRepo(repo);
    const ParamCounts c = Counts(g);
    EXPECT_EQ(c.total, Truth(repo).at("params").get<uint64_t>());
    EXPECT_EQ(c.on_disk, c.total);
    ExpectPartsSum(c);
    EXPECT_TRUE(g.tied);
    // ALiBi: no position table; the embedding LayerNorm; the MLP is 4 * hidden though n_inner
    // is null; one fused biased query_key_value.
    for (const Node& n : g.embeddings) EXPECT_NE(n.kind, NodeKind::kPositionEmbedding);
    ExpectShapes(g, {{"transformer.word_embeddings.weight", {250880, 1024}},
                     {"transformer.word_embeddings_layernorm.weight", {1024}},
                     {"transformer.word_embeddings_layernorm.bias", {1024}},
                     {"transformer.h.23.self_attention.query_key_value.weight", {3072, 1024}},
                     {"transformer.h.23.self_attention.query_key_value.bias", {3072}},
                     {"transformer.h.23.mlp.dense_h_to_4h.weight", {4096, 1024}},
                     {"transformer.h.23.post_attention_layernorm.bias", {1024}},
                     {"transformer.ln_f.bias", {1024}}});
    EXPECT_EQ(Attention(g).kind, AttentionKind::kMha);
    EXPECT_EQ(Attention(g).heads, 16);
    // fp16 K and V: 24 layers x 2 x 1024 x 2 bytes.
    EXPECT_EQ(KvBytesPerToken(g), 24 * 2 * 1024 * 2);
  }
  EXPECT_EQ(BuildRepo("bigscience/bloomz-560m").max_positions, 2048);  // its seq_length
}

// EleutherAI/gpt-j-6b: the truth is sum(p.numel()) of GPTJForCausalLM with the untied lm_head
// and its bias. The same log prints "# of buffers: 117440540" (notes: 28 x (a 1x1x2048x2048
// causal mask + 1 masked_bias)), which the checkpoint stores beside the parameters.
TEST(ClassicDecoders, GptJ6bIsExactWithItsStoredMasks) {
  const ModelGraph g = BuildRepo("EleutherAI/gpt-j-6b");
  const ParamCounts c = Counts(g);
  EXPECT_EQ(c.total, Truth("EleutherAI/gpt-j-6b").at("params").get<uint64_t>());
  EXPECT_EQ(c.buffers, 117440540u);
  EXPECT_EQ(c.on_disk, c.total + c.buffers);
  ExpectPartsSum(c);
  EXPECT_FALSE(g.tied);
  ExpectShapes(g, {{"transformer.wte.weight", {50400, 4096}},
                   {"transformer.h.0.attn.q_proj.weight", {4096, 4096}},
                   {"transformer.h.0.attn.bias", {1, 1, 2048, 2048}},
                   {"transformer.h.0.attn.masked_bias", {}},
                   {"transformer.h.27.mlp.fc_in.weight", {16384, 4096}},
                   {"transformer.h.27.mlp.fc_in.bias", {16384}},
                   {"transformer.h.27.ln_1.bias", {4096}},
                   {"lm_head.weight", {50400, 4096}},
                   {"lm_head.bias", {50400}}});
  ExpectAbsent(g, {"transformer.h.0.attn.q_proj.bias", "transformer.h.0.attn.out_proj.bias",
                   "transformer.h.0.ln_2.weight", "transformer.wpe.weight"});
  EXPECT_EQ(Tensors(g).at("transformer.h.0.attn.bias")->role, TensorRole::kBuffer);
  // One LayerNorm feeds attention and MLP in parallel: the MLP keeps no input of its own.
  ASSERT_EQ(g.blocks[0].nodes.size(), 3u);
  EXPECT_FALSE(g.blocks[0].nodes[2].saves_input);
  // fp32 checkpoint served in fp16: 28 layers x 2 x 4096 x 2 bytes.
  EXPECT_EQ(KvBytesPerToken(g), 28 * 2 * 4096 * 2);
}

// bigcode/gpt_bigcode-santacoder: the truth is the Hub's safetensors total, the head tied to wte
// and not stored, so it is both the parameters and the stored elements.
TEST(ClassicDecoders, GptBigcodeSantacoderIsExactWithOneKvHead) {
  const ModelGraph g = BuildRepo("bigcode/gpt_bigcode-santacoder");
  const ParamCounts c = Counts(g);
  const uint64_t truth = Truth("bigcode/gpt_bigcode-santacoder").at("params").get<uint64_t>();
  EXPECT_EQ(c.total, truth);
  EXPECT_EQ(c.on_disk, truth);
  ExpectPartsSum(c);
  const AttentionShape& attn = Attention(g);
  EXPECT_EQ(attn.kind, AttentionKind::kMqa);
  EXPECT_EQ(attn.kv_heads, 1);
  EXPECT_EQ(attn.head_dim, 128);
  // nn.Linear, not GPT-2's Conv1D: weights are [out, in]; a GPT-2 reading would transpose them
  // and keep the same count. c_attn holds q plus one shared K and V head.
  ExpectShapes(g, {{"transformer.wpe.weight", {2048, 2048}},
                   {"transformer.h.0.attn.c_attn.weight", {2048 + 2 * 128, 2048}},
                   {"transformer.h.0.mlp.c_fc.weight", {8192, 2048}},
                   {"transformer.h.0.mlp.c_proj.weight", {2048, 8192}}});
  ExpectAbsent(g, {"lm_head.weight", "transformer.h.0.attn.bias"});
  // fp16 K and V of the one shared head: 24 layers x 2 x 128 x 2 bytes.
  EXPECT_EQ(KvBytesPerToken(g), 24 * 2 * 128 * 2);
}

// mosaicml/mpt-7b-instruct: the truth gives only on_disk_elements, the sum of the 194 tensors
// ggml listed for mosaicml/mpt-7b (same architecture fields). That checkpoint holds no buffer
// and no lm_head (tied to wte), so the parameters are those elements too.
TEST(ClassicDecoders, Mpt7bMatchesItsTensorList) {
  const ModelGraph g = BuildRepo("mosaicml/mpt-7b-instruct");
  const ParamCounts c = Counts(g);
  const uint64_t on_disk = Truth("mosaicml/mpt-7b-instruct").at("on_disk_elements").get<uint64_t>();
  EXPECT_EQ(c.on_disk, on_disk);
  EXPECT_EQ(c.total, on_disk);
  ExpectPartsSum(c);
  // The listing: wte, per block norm_1, attn.Wqkv, attn.out_proj, norm_2, ffn.up_proj,
  // ffn.down_proj (weights only: no_bias), then norm_f; no wpe though learned_pos_emb is true,
  // because alibi turns it off.
  const std::map<std::string, const TensorSpec*> tensors = Tensors(g);
  EXPECT_EQ(tensors.size(), 194u);
  ExpectShapes(g, {{"transformer.wte.weight", {50432, 4096}},
                   {"transformer.blocks.0.norm_1.weight", {4096}},
                   {"transformer.blocks.0.attn.Wqkv.weight", {12288, 4096}},
                   {"transformer.blocks.0.attn.out_proj.weight", {4096, 4096}},
                   {"transformer.blocks.31.norm_2.weight", {4096}},
                   {"transformer.blocks.31.ffn.up_proj.weight", {16384, 4096}},
                   {"transformer.blocks.31.ffn.down_proj.weight", {4096, 16384}},
                   {"transformer.norm_f.weight", {4096}}});
  ExpectAbsent(g, {"transformer.wpe.weight", "transformer.blocks.0.norm_1.bias",
                   "transformer.blocks.0.attn.Wqkv.bias", "lm_head.weight"});
  EXPECT_EQ(g.max_positions, 2048);
  // bf16 K and V: 32 layers x 2 x 4096 x 2 bytes.
  EXPECT_EQ(KvBytesPerToken(g), 32 * 2 * 4096 * 2);
}

// MPT's nested attn_config is read with the same care as the top level: an unknown attention
// type or norm is an error naming the key, not a guess.
TEST(ClassicDecoders, MptRefusesWhatItDoesNotModel) {
  const nlohmann::json base = ReadJsonFixture(ModelConfigPath("mosaicml/mpt-7b-instruct"));
  nlohmann::json config = base;
  config["attn_config"]["attn_type"] = "sliding_sparse_attention";
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("attn_config: attn_type \"sliding_sparse_attention\""),
            std::string::npos)
      << g.error().message;

  config = base;
  config["norm_type"] = "batchnorm";
  g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("norm_type \"batchnorm\""), std::string::npos)
      << g.error().message;

  // Grouped-query attention narrows the fused projection to q + 2 x kv_n_heads heads.
  config = base;
  config["attn_config"]["attn_type"] = "grouped_query_attention";
  config["attn_config"]["kv_n_heads"] = 8;
  const ModelGraph gqa = Build(config);
  EXPECT_EQ(Attention(gqa).kv_heads, 8);
  ExpectShapes(gqa, {{"transformer.blocks.0.attn.Wqkv.weight", {4096 + 2 * 8 * 128, 4096}}});
}

// stabilityai/stablelm-2-1_6b has a truth but no config; its official chat sibling has both, the
// same architecture keys and the same figure (its Hub safetensors total: stored elements too).
// The base repo is skipped for want of its own config.json.
TEST(ClassicDecoders, Stablelm2_1_6bChatIsExact) {
  const ModelGraph g = BuildRepo("stabilityai/stablelm-2-1_6b-chat");
  const ParamCounts c = Counts(g);
  const uint64_t truth = Truth("stabilityai/stablelm-2-1_6b-chat").at("params").get<uint64_t>();
  EXPECT_EQ(c.total, truth);
  EXPECT_EQ(c.on_disk, truth);
  EXPECT_EQ(truth, Truth("stabilityai/stablelm-2-1_6b").at("params").get<uint64_t>());
  ExpectPartsSum(c);
  EXPECT_FALSE(g.tied);
  // use_qkv_bias biases q/k/v only; LayerNorms have weight and bias; SwiGLU without biases.
  ExpectShapes(g, {{"model.embed_tokens.weight", {100352, 2048}},
                   {"model.layers.0.self_attn.q_proj.bias", {2048}},
                   {"model.layers.0.self_attn.v_proj.bias", {2048}},
                   {"model.layers.0.input_layernorm.bias", {2048}},
                   {"model.layers.23.post_attention_layernorm.bias", {2048}},
                   {"model.layers.23.mlp.gate_proj.weight", {5632, 2048}},
                   {"model.norm.bias", {2048}},
                   {"lm_head.weight", {100352, 2048}}});
  ExpectAbsent(g, {"model.layers.0.self_attn.o_proj.bias", "model.layers.0.mlp.down_proj.bias",
                   "lm_head.bias"});
  // fp16 K and V: 24 layers x 2 x 32 heads x 64 x 2 bytes.
  EXPECT_EQ(KvBytesPerToken(g), 24 * 2 * 32 * 64 * 2);
}

// StableLM's options: a parallel residual drops post_attention_layernorm, and qk_layernorm adds
// one bias-free LayerNorm per query head and per KV head under "norms.{h}".
TEST(ClassicDecoders, StablelmParallelResidualAndPerHeadQkNorm) {
  nlohmann::json config = ReadJsonFixture(ModelConfigPath("stabilityai/stablelm-2-1_6b-chat"));
  config["use_parallel_residual"] = true;
  config["qk_layernorm"] = true;
  config["num_key_value_heads"] = 8;
  const ModelGraph g = Build(config);
  ExpectShapes(g, {{"model.layers.0.self_attn.q_layernorm.norms.0.weight", {64}},
                   {"model.layers.0.self_attn.q_layernorm.norms.31.weight", {64}},
                   {"model.layers.0.self_attn.k_layernorm.norms.7.weight", {64}},
                   {"model.layers.0.self_attn.k_proj.weight", {8 * 64, 2048}}});
  ExpectAbsent(g, {"model.layers.0.self_attn.k_layernorm.norms.8.weight",
                   "model.layers.0.self_attn.q_layernorm.norms.0.bias",
                   "model.layers.0.post_attention_layernorm.weight"});
  EXPECT_EQ(Attention(g).qk_norm_width, (32 + 8) * 64);
}

}  // namespace
}  // namespace hubwatch
