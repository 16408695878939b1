// Encoder-decoders (arch_seq2seq.cc, arch_seq2seq_bart.cc): t5, mt5, bart, marian, whisper.
// Exact counts against tests/fixtures/models/truth-seq2seq.json and the encoder-decoder entries
// of truth-encoders.json; the tensor names and shapes a count alone would not check; what each
// section's attention caches; and what serving holds for a model that decodes. Figures not
// published are the truth notes' arithmetic, said where used.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/checkpoint.h"
#include "estimator/estimate.h"
#include "estimator/kv_cache.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::HeaderOf;
using testing::ModelConfigPath;
using testing::ReadJsonFixture;

nlohmann::json Config(const std::string& repo) { return ReadJsonFixture(ModelConfigPath(repo)); }

// A modelled graph with its counts and every tensor by its checkpoint name; the test fails on a
// build or count error.
struct Model {
  ModelGraph g;
  ParamCounts c;
  std::map<std::string, TensorSpec> tensors;

  bool Has(const std::string& name) const { return tensors.count(name) > 0; }
  // The tensor `name`, failing the test when the graph has none.
  TensorSpec Find(const std::string& name) const {
    auto it = tensors.find(name);
    EXPECT_NE(it, tensors.end()) << name;
    return it == tensors.end() ? TensorSpec{} : it->second;
  }
  std::vector<int64_t> ShapeOf(const std::string& name) const {
    return Find(name).shape.ToVector();
  }
};

Model Load(const nlohmann::json& config) {
  Model m;
  Result<ModelGraph> g = BuildModelGraph(config);
  if (!g.ok()) {
    ADD_FAILURE() << g.error().message;
    return m;
  }
  m.g = std::move(g).value();
  Result<ParamCounts> c = CountParameters(m.g);
  EXPECT_TRUE(c.ok());
  if (c.ok()) m.c = *c;
  ForEachTensor(m.g, [&](const std::string& name, const TensorSpec& t, int64_t) {
    m.tensors.emplace(name, t);
  });
  return m;
}

Model LoadRepo(const std::string& repo) { return Load(Config(repo)); }

// Every encoder-decoder: an "encoder" section that caches nothing, a "decoder" section whose
// self-attention caches its tokens and whose cross-attention caches `cross_tokens` encoder
// positions; it decodes and computes logits; its sections' counts add up to the total.
void ExpectEncoderDecoder(const Model& m, int64_t cross_tokens) {
  const ModelGraph& g = m.g;
  ASSERT_EQ(g.sections.size(), 2u);
  EXPECT_EQ(g.sections[0].name, "encoder");
  EXPECT_EQ(g.sections[1].name, "decoder");
  EXPECT_TRUE(g.decodes && g.vocab_logits);
  std::map<std::string, std::set<KvCaching>> caching;  // by section name
  for (const BlockTemplate& b : g.blocks) {
    for (const Node& n : b.nodes) {
      if (n.kind != NodeKind::kAttention) continue;
      caching[g.sections.at(static_cast<size_t>(n.section)).name].insert(n.attention.caching);
      const bool cross = n.attention.caching == KvCaching::kCross;
      EXPECT_EQ(n.attention.cross_tokens, cross ? cross_tokens : 0) << n.module;
    }
  }
  EXPECT_EQ(caching["encoder"], std::set<KvCaching>{KvCaching::kNone});
  EXPECT_EQ(caching["decoder"], (std::set<KvCaching>{KvCaching::kSelf, KvCaching::kCross}));
  const ParamCounts& c = m.c;
  ASSERT_EQ(c.by_section.size(), 2u);
  EXPECT_EQ(c.by_section[0] + c.by_section[1], c.total);
  EXPECT_EQ(c.embedding + c.attention + c.mlp + c.norm + c.head + c.other, c.total);
  EXPECT_EQ(c.active, c.total);
}

// Every entry of truth-seq2seq.json and the encoder-decoder entries of truth-encoders.json with
// a published count.
TEST(Seq2Seq, ExactParameterCountsFromTruth) {
  const std::set<std::string> types = {"t5", "mt5", "bart", "marian", "whisper"};
  const std::map<std::string, int64_t> cross = {{"google/byt5-small", 512},
                                                {"google/mt5-small", 512},
                                                {"google/flan-t5-large", 512},
                                                {"Jiaqi7777/BART-139M-SUMMARY-v1", 1024},
                                                {"amitkayal/whisper-tiny-hi", 1500}};
  int checked = 0;
  for (const char* file : {"models/truth-seq2seq.json", "models/truth-encoders.json"}) {
    const nlohmann::json truth = ReadJsonFixture(file);
    for (auto it = truth.begin(); it != truth.end(); ++it) {
      if (it.key().front() == '_' || !types.count(it->value("model_type", "")) ||
          !it->contains("params")) {
        continue;
      }
      SCOPED_TRACE(it.key());
      const Model m = LoadRepo(it.key());
      EXPECT_EQ(m.g.model_type, it->at("model_type").get<std::string>());
      EXPECT_EQ(m.c.total, it->at("params").get<uint64_t>());
      ExpectEncoderDecoder(m, cross.at(it.key()));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5);  // flan-t5-large, bart, byt5-small, mt5-small, whisper-tiny-hi
}

// ByT5: attention 6 x 64 = 384 wide against d_model 1472, 12 encoder and 4 decoder blocks, the
// relative position bias in block 0 of each stack only, an untied lm_head (the truth notes).
TEST(Seq2Seq, ByT5BlocksUnderTheirCheckpointNames) {
  const Model m = LoadRepo("google/byt5-small");
  const ModelGraph& g = m.g;
  EXPECT_EQ(g.layers.size(), 16u);
  EXPECT_EQ(m.ShapeOf("shared.weight"), (std::vector<int64_t>{384, 1472}));
  EXPECT_EQ(m.ShapeOf("encoder.block.0.layer.0.SelfAttention.q.weight"),
            (std::vector<int64_t>{384, 1472}));
  EXPECT_EQ(m.ShapeOf("encoder.block.11.layer.0.SelfAttention.o.weight"),
            (std::vector<int64_t>{1472, 384}));
  EXPECT_EQ(m.ShapeOf("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"),
            (std::vector<int64_t>{32, 6}));
  EXPECT_EQ(m.ShapeOf("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"),
            (std::vector<int64_t>{32, 6}));
  EXPECT_FALSE(m.Has("encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"));
  EXPECT_EQ(m.ShapeOf("decoder.block.3.layer.1.EncDecAttention.k.weight"),
            (std::vector<int64_t>{384, 1472}));
  EXPECT_EQ(m.ShapeOf("decoder.block.3.layer.2.DenseReluDense.wi_1.weight"),
            (std::vector<int64_t>{3584, 1472}));
  EXPECT_EQ(m.ShapeOf("decoder.final_layer_norm.weight"), (std::vector<int64_t>{1472}));
  EXPECT_FALSE(m.Has("decoder.block.4.layer.0.layer_norm.weight"));
  const TensorSpec head = m.Find("lm_head.weight");
  EXPECT_EQ(head.role, TensorRole::kParameter);
  EXPECT_EQ(head.shape.ToVector(), (std::vector<int64_t>{384, 1472}));
  // The stacks' embed_tokens are `shared` itself: declared, not stored, not counted.
  const TensorSpec view = m.Find("encoder.embed_tokens.weight");
  EXPECT_EQ(view.role, TensorRole::kTiedCopy);
  EXPECT_FALSE(view.stored);
  EXPECT_FALSE(g.tied);
}

// gsarti/it5-small has no published count; its truth notes give 76961152 for its shape (the
// flan-t5-small figure, which the collector's formula reproduces). With tie_word_embeddings true
// (T5Config's default, the original T5) lm_head is `shared` and counted once.
TEST(Seq2Seq, T5HeadTiedOrNot) {
  nlohmann::json config = Config("gsarti/it5-small");
  EXPECT_EQ(Load(config).c.total, 76961152u);
  config["tie_word_embeddings"] = true;
  const Model m = Load(config);
  EXPECT_TRUE(m.g.tied);
  EXPECT_EQ(m.c.total, 76961152u - 32128u * 512u);
  EXPECT_EQ(m.Find("lm_head.weight").role, TensorRole::kTiedCopy);
}

// ByT5's attention is narrower than d_model, as its config says (d_kv): noted, not warned.
TEST(Seq2Seq, NarrowAttentionFromDkvIsOnlyNoted) {
  EstimateInput in;
  Result<Estimate> e = EstimateModel(Config("google/byt5-small"), in);
  ASSERT_TRUE(e.ok()) << e.error().message;
  int found = 0;
  for (const Lint& l : e->lints) {
    if (l.code != "head_dim_differs") continue;
    ++found;
    EXPECT_EQ(l.severity, LintSeverity::kInfo) << l.message;
  }
  EXPECT_EQ(found, 1);
}

// The estimate of `config` given a checkpoint of `header`: it matches the graph exactly.
void ExpectCheckpointMatches(const nlohmann::json& config, const SafetensorsHeader& header,
                             uint64_t tied_copy_elements) {
  EstimateInput in;
  in.headers = {header};
  Result<Estimate> e = EstimateModel(config, in);
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_TRUE(e->checkpoint.has_value());
  EXPECT_EQ(e->checkpoint->parameter_delta, 0);
  EXPECT_TRUE(e->checkpoint->missing.empty());
  EXPECT_TRUE(e->checkpoint->unexpected.empty());
  EXPECT_EQ(e->checkpoint->tied_copy_elements, tied_copy_elements);
  for (const Lint& l : e->lints) EXPECT_NE(l.code, "checkpoint_delta") << l.message;
}

// A checkpoint holding what T5ForConditionalGeneration saves matches the graph, also with the
// stacks' copies of `shared` that older checkpoints store; so do BART's (with its
// final_logits_bias buffer) and Whisper's.
TEST(Seq2Seq, CheckpointsMatch) {
  const nlohmann::json flan = Config("google/flan-t5-large");
  SafetensorsHeader header = HeaderOf(Load(flan).g);
  ExpectCheckpointMatches(flan, header, 0);
  const SafetensorsTensor copy = header.tensors.at("shared.weight");
  header.tensors.emplace("encoder.embed_tokens.weight", copy);
  header.tensors.emplace("decoder.embed_tokens.weight", copy);
  ExpectCheckpointMatches(flan, header, 2u * 32128u * 1024u);
  for (const char* repo : {"Jiaqi7777/BART-139M-SUMMARY-v1", "amitkayal/whisper-tiny-hi"}) {
    SCOPED_TRACE(repo);
    const nlohmann::json config = Config(repo);
    ExpectCheckpointMatches(config, HeaderOf(Load(config).g), 0);
  }
}

// Whisper: a log-mel front end and a frozen encoder position table that are parameters (the
// truth counts 1500 x 384 in), no k_proj bias, proj_out tied to the decoder embedding.
TEST(Seq2Seq, WhisperAudioFrontEndAndTiedProjection) {
  const Model m = LoadRepo("amitkayal/whisper-tiny-hi");
  const ModelGraph& g = m.g;
  EXPECT_EQ(m.ShapeOf("model.encoder.conv1.weight"), (std::vector<int64_t>{384, 80, 3}));
  EXPECT_EQ(m.ShapeOf("model.encoder.conv2.weight"), (std::vector<int64_t>{384, 384, 3}));
  const TensorSpec positions = m.Find("model.encoder.embed_positions.weight");
  EXPECT_EQ(positions.shape.ToVector(), (std::vector<int64_t>{1500, 384}));
  EXPECT_EQ(positions.role, TensorRole::kParameter);
  EXPECT_TRUE(positions.stored);
  EXPECT_EQ(m.ShapeOf("model.decoder.embed_positions.weight"), (std::vector<int64_t>{448, 384}));
  EXPECT_TRUE(m.Has("model.decoder.layers.3.encoder_attn.q_proj.bias"));
  EXPECT_FALSE(m.Has("model.decoder.layers.3.encoder_attn.k_proj.bias"));
  EXPECT_FALSE(m.Has("model.encoder.layers.0.self_attn.k_proj.bias"));
  EXPECT_EQ(m.ShapeOf("model.encoder.layer_norm.weight"), (std::vector<int64_t>{384}));
  EXPECT_FALSE(m.Has("final_logits_bias"));
  const TensorSpec head = m.Find("proj_out.weight");
  EXPECT_EQ(head.role, TensorRole::kTiedCopy);
  EXPECT_FALSE(head.stored);
  EXPECT_TRUE(g.tied);
  EXPECT_EQ(g.max_positions, 448);
}

// BART: learned positions with BartLearnedPositionalEmbedding's offset of 2 rows, the embedding
// LayerNorm, and final_logits_bias stored as a buffer beside the parameters.
TEST(Seq2Seq, BartPositionsOffsetAndFinalLogitsBias) {
  const Model m = LoadRepo("Jiaqi7777/BART-139M-SUMMARY-v1");
  const ModelGraph& g = m.g;
  EXPECT_EQ(m.ShapeOf("model.shared.weight"), (std::vector<int64_t>{50265, 768}));
  EXPECT_EQ(m.ShapeOf("model.encoder.embed_positions.weight"), (std::vector<int64_t>{1026, 768}));
  EXPECT_EQ(m.ShapeOf("model.decoder.layernorm_embedding.bias"), (std::vector<int64_t>{768}));
  EXPECT_EQ(m.ShapeOf("model.decoder.layers.5.encoder_attn.k_proj.bias"),
            (std::vector<int64_t>{768}));
  EXPECT_EQ(m.ShapeOf("model.encoder.layers.5.fc1.weight"), (std::vector<int64_t>{3072, 768}));
  const TensorSpec bias = m.Find("final_logits_bias");
  EXPECT_EQ(bias.role, TensorRole::kBuffer);
  EXPECT_EQ(bias.shape.ToVector(), (std::vector<int64_t>{1, 50265}));
  const ParamCounts& c = m.c;
  EXPECT_EQ(c.buffers, 50265u);
  EXPECT_EQ(c.on_disk, 139420416u + 50265u);
  EXPECT_TRUE(g.tied);
}

// Marian (structure only; the truth notes' arithmetic, not a published figure): sinusoidal
// position tables are parameters that MarianMTModel never saves, so a checkpoint lacks exactly
// them.
TEST(Seq2Seq, MarianSinusoidalPositionsAreCountedButNotStored) {
  const Model m = LoadRepo("Helsinki-NLP/opus-mt-tc-big-gmq-itc");
  const ModelGraph& g = m.g;
  ExpectEncoderDecoder(m, 1024);
  const TensorSpec positions = m.Find("model.decoder.embed_positions.weight");
  EXPECT_EQ(positions.shape.ToVector(), (std::vector<int64_t>{1024, 1024}));
  EXPECT_EQ(positions.role, TensorRole::kParameter);
  EXPECT_FALSE(positions.stored);
  EXPECT_FALSE(m.Has("model.encoder.layernorm_embedding.weight"));
  const ParamCounts& c = m.c;
  EXPECT_EQ(c.total, 237814784u);
  EXPECT_EQ(c.on_disk, 235775601u);
  Result<CheckpointComparison> cmp = CompareWithCheckpoint(g, c, {HeaderOf(g)});
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(cmp->missing, (std::vector<std::string>{"model.decoder.embed_positions.weight",
                                                    "model.encoder.embed_positions.weight"}));
}

// With share_encoder_decoder_embeddings false each stack has its own table, the decoder's (and
// the head tied to it) decoder_vocab_size rows.
TEST(Seq2Seq, MarianUnsharedEmbeddingsPerStack) {
  nlohmann::json config = Config("Helsinki-NLP/opus-mt-tc-big-gmq-itc");
  config["share_encoder_decoder_embeddings"] = false;
  config["decoder_vocab_size"] = 1000;
  const Model m = Load(config);
  EXPECT_FALSE(m.Has("model.shared.weight"));
  EXPECT_EQ(m.ShapeOf("model.encoder.embed_tokens.weight"), (std::vector<int64_t>{57969, 1024}));
  EXPECT_EQ(m.ShapeOf("model.decoder.embed_tokens.weight"), (std::vector<int64_t>{1000, 1024}));
  EXPECT_EQ(m.ShapeOf("lm_head.weight"), (std::vector<int64_t>{1000, 1024}));
  EXPECT_EQ(m.ShapeOf("final_logits_bias"), (std::vector<int64_t>{1, 1000}));
  EXPECT_EQ(m.c.total, 237814784u + 1000u * 1024u);  // the shared count plus a second table
  EXPECT_EQ(m.g.vocab, 1000);
}

// The cache of whisper-tiny: 4 decoder layers of 6 x (64 + 64) self-attention elements per
// token, and per sequence 4 cross-attention layers over all 1500 encoder positions; the encoder
// caches nothing. Serving holds that cache per sequence and a prefill step per card.
TEST(Seq2Seq, WhisperServesSelfAndCrossAttentionCaches) {
  const Model m = LoadRepo("amitkayal/whisper-tiny-hi");
  const ModelGraph& g = m.g;
  const KvCache kv = ComputeKvCache(g, 448, 2);
  EXPECT_EQ(kv.cached_attention_layers, 4);
  EXPECT_EQ(kv.bytes_per_token, 4.0 * 6 * 128 * 2);
  EXPECT_EQ(kv.cross_bytes_per_sequence, 4.0 * 6 * 128 * 1500 * 2);
  EXPECT_EQ(kv.bytes_per_sequence, kv.bytes_per_token * 448 + kv.cross_bytes_per_sequence);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(kv.layer_bytes_per_sequence[i], 0) << i;

  EstimateInput in;
  in.workload.context = 448;
  Result<Estimate> e = EstimateModel(Config("amitkayal/whisper-tiny-hi"), in);
  ASSERT_TRUE(e.ok()) << e.error().message;
  int serve_plans = 0;
  for (const MemoryPlan& p : e->memory) {
    if (p.mode != MemoryMode::kServe) continue;
    ++serve_plans;
    EXPECT_EQ(p.Bytes(MemoryItem::kKvCache), kv.bytes_per_sequence);
    EXPECT_GT(p.Bytes(MemoryItem::kPrefill), 0);
    EXPECT_EQ(p.per_card_per_sample, 0);
  }
  EXPECT_EQ(serve_plans, 1);
}

// A T5EncoderModel config (a text encoder shipped alone) is the encoder stack and `shared`.
TEST(Seq2Seq, T5EncoderModelIsTheEncoderStackAlone) {
  nlohmann::json config = Config("google/flan-t5-large");
  config["architectures"] = {"T5EncoderModel"};
  const Model m = Load(config);
  const ModelGraph& g = m.g;
  EXPECT_FALSE(g.decodes);
  EXPECT_FALSE(g.vocab_logits);
  EXPECT_TRUE(g.sections.empty());
  EXPECT_EQ(g.layers.size(), 24u);
  EXPECT_FALSE(m.Has("lm_head.weight"));
  EXPECT_FALSE(m.Has("decoder.final_layer_norm.weight"));
  // The flan-t5-large total less the decoder blocks, its final norm and lm_head (truth notes).
  EXPECT_EQ(m.c.total, 783150080u - 24u * 17042432u - 512u - 1024u - 32128u * 1024u);
  EXPECT_EQ(ComputeKvCache(g, 512, 2).bytes_per_sequence, 0);
}

// `repo`'s config.json with `key` set to `value` fails to build, in one line holding `message`.
void ExpectRefused(const std::string& repo, const std::string& key, const nlohmann::json& value,
                   const std::string& message) {
  SCOPED_TRACE(repo + " " + key);
  nlohmann::json config = Config(repo);
  config[key] = value;
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find(message), std::string::npos) << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos) << g.error().message;
}

TEST(Seq2Seq, BadConfigsFailWithOneLine) {
  ExpectRefused("google/flan-t5-large", "num_layers", 1000000000, "num_layers");
  ExpectRefused("google/flan-t5-large", "feed_forward_proj", "fancy-gelu", "feed_forward_proj");
  ExpectRefused("google/mt5-small", "d_model", nullptr, "missing required key d_model");
  ExpectRefused("Jiaqi7777/BART-139M-SUMMARY-v1", "decoder_attention_heads", 7, "not divisible");
  ExpectRefused("Helsinki-NLP/opus-mt-tc-big-gmq-itc", "share_encoder_decoder_embeddings", "yes",
                "share_encoder_decoder_embeddings");
  ExpectRefused("amitkayal/whisper-tiny-hi", "encoder_layers", 1000000000, "encoder_layers");
  ExpectRefused("amitkayal/whisper-tiny-hi", "max_source_positions", "1500",
                "max_source_positions");
}

}  // namespace
}  // namespace hubwatch
