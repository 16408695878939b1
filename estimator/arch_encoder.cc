// Encoders: bidirectional transformers that read a whole input in one forward pass, so their
// attention caches nothing (KvCaching::kNone) and the graph does not decode. Covers bert,
// roberta, xlm-roberta, electra and mpnet (one post-LayerNorm BERT layout, the rows of
// kBertLike below), distilbert, deberta-v2 and modernbert (builders of their own).
//
// The modelled class is the base model AutoModel loads (BertModel with its pooler, ModernBertModel,
// ...): that is what published parameter counts describe. A checkpoint saved from a masked-LM or
// pretraining class (architectures[0] ends in ForMaskedLM / ForPreTraining) also stores that
// class's head, which the base model does not load: those tensors are extra_nodes of role
// kExtraOnDisk, the tied decoder weight a kTiedCopy that is not stored. `stored` says what each
// family's reference checkpoint holds (see the table); tensors declared but not stored still match
// a checkpoint that does hold them. No encoder here counts vocabulary logits: vocab_logits=false.

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/encoder_parts.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

using namespace build;    // NOLINT: internal helpers
using namespace encoder;  // NOLINT: the encoders' shared parts

// ---------------------------------------------------------------------------------------------
// The BERT layout: embeddings (word, position, token type, LayerNorm), post-LayerNorm layers of
// self-attention (attention.self.query/key/value + attention.output.dense, LayerNorm) and an
// MLP (intermediate.dense, output.dense, LayerNorm), an optional pooler.

enum class AttentionNames {
  kBert,   // attention.self.{query,key,value}, attention.output.{dense,LayerNorm}
  kMpnet,  // attention.attn.{q,k,v,o}, attention.LayerNorm
};
enum class HeadClass {
  kBertCls,      // cls.predictions.{transform,decoder,bias} + cls.seq_relationship (NSP)
  kLmHead,       // lm_head.{dense,layer_norm,decoder,bias}
  kElectraHead,  // discriminator_predictions (ForPreTraining) or generator_* (ForMaskedLM)
};

struct BertLike {
  std::string_view model_type = {};
  std::string_view family = {};
  std::string_view prefix = {};  // base_model_prefix: "bert"
  AttentionNames attention = AttentionNames::kBert;
  HeadClass head = HeadClass::kBertCls;
  bool token_types = true;
  bool pooler = true;
  bool factored_embedding = false;       // electra: embedding_size, then embeddings_project
  bool relative_attention_bias = false;  // mpnet: encoder.relative_attention_bias
  // What the family's reference checkpoint stores when config.json names the head class (with a
  // base-model class: the pooler, no position_ids, no head).
  bool pooler_stored = true;
  bool position_ids_stored = false;
  bool head_stored = true;
};

const BertLike kBertLike[] = {
    // google-bert/bert-base-uncased: a BertForPreTraining checkpoint under a BertForMaskedLM
    // config (the google-research conversions): pooler, MLM and NSP heads all stored.
    {.model_type = "bert",
     .family = "BERT encoder: learned positions and token types, post-LayerNorm, GELU MLP, pooler",
     .prefix = "bert"},
    // FacebookAI/roberta-base: RobertaForMaskedLM, no pooler, position_ids stored (I64).
    {.model_type = "roberta",
     .family = "RoBERTa encoder: BERT layout, positions offset by padding_idx, pooler",
     .prefix = "roberta",
     .head = HeadClass::kLmHead,
     .pooler_stored = false,
     .position_ids_stored = true},
    // FacebookAI/xlm-roberta-base: XLMRobertaForMaskedLM with the pooler stored.
    {.model_type = "xlm-roberta",
     .family = "XLM-RoBERTa encoder: RoBERTa layout with a multilingual vocabulary, pooler",
     .prefix = "roberta",
     .head = HeadClass::kLmHead},
    // google/electra-small-discriminator: ElectraForPreTraining (the discriminator head).
    {.model_type = "electra",
     .family = "ELECTRA encoder: BERT layout with factored embeddings projected to hidden_size, "
               "no pooler",
     .prefix = "electra",
     .head = HeadClass::kElectraHead,
     .pooler = false,
     .factored_embedding = true},
    // sentence-transformers/all-mpnet-base-v2: a bare MPNetModel under an MPNetForMaskedLM
    // config, so the head is declared but not stored.
    {.model_type = "mpnet",
     .family = "MPNet encoder: BERT layout without token types, relative position bias shared "
               "by every layer, pooler",
     .prefix = "mpnet",
     .attention = AttentionNames::kMpnet,
     .head = HeadClass::kLmHead,
     .token_types = false,
     .relative_attention_bias = true,
     .head_stored = false},
};

void AddBertHeads(const BertLike& f, ConfigReader& config, ModelGraph& g, int64_t width,
                  bool stored) {
  const int64_t vocab = g.vocab, hidden = g.hidden;
  const bool tied = config.Flag({"tie_word_embeddings"}, true);
  switch (f.head) {
    case HeadClass::kBertCls: {
      Node mlm = HeadNode("cls.predictions", "MLM head (transform, tied decoder)", hidden, vocab);
      AddLinear(mlm, "transform.dense", hidden, hidden, true);
      AddLayerNorm(mlm, "transform.LayerNorm", hidden, true);
      AddDecoderWeight(mlm, "decoder.weight", vocab, hidden, tied);
      AddTensor(mlm, "bias", {vocab});
      AddTensor(mlm, "decoder.bias", {vocab}, TensorRole::kTiedCopy).stored = false;
      g.extra_nodes.push_back(OnDiskOnly(std::move(mlm), stored));
      Node nsp = HeadNode("cls.seq_relationship", "next-sentence-prediction head", hidden, 2);
      AddLinear(nsp, "", hidden, 2, true);
      g.extra_nodes.push_back(OnDiskOnly(std::move(nsp), stored));
      break;
    }
    case HeadClass::kLmHead: {
      Node mlm = HeadNode("lm_head", "MLM head (dense, layer_norm, tied decoder)", hidden, vocab);
      AddLinear(mlm, "dense", hidden, hidden, true);
      AddLayerNorm(mlm, "layer_norm", hidden, true);
      AddDecoderWeight(mlm, "decoder.weight", vocab, hidden, tied);
      AddTensor(mlm, "decoder.bias", {vocab}, TensorRole::kTiedCopy).stored = false;
      AddTensor(mlm, "bias", {vocab});
      g.extra_nodes.push_back(OnDiskOnly(std::move(mlm), stored));
      break;
    }
    case HeadClass::kElectraHead:
      if (g.architecture.ends_with("ForPreTraining")) {
        Node rtd = HeadNode("discriminator_predictions",
                            "replaced-token-detection head (discriminator)", hidden, 1);
        AddLinear(rtd, "dense", hidden, hidden, true);
        AddLinear(rtd, "dense_prediction", hidden, 1, true);
        g.extra_nodes.push_back(OnDiskOnly(std::move(rtd), stored));
      } else {
        Node gen = HeadNode("generator_predictions", "generator MLM transform", hidden, width);
        AddLayerNorm(gen, "LayerNorm", width, true);
        AddLinear(gen, "dense", hidden, width, true);
        g.extra_nodes.push_back(OnDiskOnly(std::move(gen), stored));
        Node lm = HeadNode("generator_lm_head", "generator MLM decoder", width, vocab);
        AddDecoderWeight(lm, "weight", vocab, width, tied);
        AddTensor(lm, "bias", {vocab});
        g.extra_nodes.push_back(OnDiskOnly(std::move(lm), stored));
      }
      break;
  }
}

void BuildBertLike(const BertLike& f, ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"hidden_size"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  const int64_t inter = config.Positive({"intermediate_size"}, kMaxWidth);
  const int64_t positions = config.Positive({"max_position_embeddings"}, kMaxPositions, 512,
                                            "max_position_embeddings absent: 512 (the default)");
  const int64_t types = f.token_types
                            ? config.NonNegative({"type_vocab_size"}, kMaxVocab, 2,
                                                 "type_vocab_size absent: 2 (the default)")
                            : 0;
  const int64_t width = f.factored_embedding
                            ? config.Positive({"embedding_size"}, kMaxWidth, 128,
                                              "embedding_size absent: ELECTRA's default 128")
                            : hidden;
  const std::string act = config.String({"hidden_act"}, "gelu");
  if (hidden % heads != 0) config.Fail("hidden_size is not divisible by num_attention_heads");
  const int64_t head_dim = hidden / heads;
  // relative_key(_query): each layer learns a distance embedding [2 * positions - 1, head_dim].
  bool distance_embedding = false;
  if (f.attention == AttentionNames::kBert) {
    const std::string type = config.String({"position_embedding_type"}, "absolute");
    distance_embedding = type == "relative_key" || type == "relative_key_query";
    if (!distance_embedding && type != "absolute") {
      config.Fail("position_embedding_type must be absolute, relative_key or relative_key_query");
    }
  }
  if (config.Flag({"add_cross_attention"}, false)) {
    config.Fail("add_cross_attention: a BERT-style decoder with cross-attention is not modelled");
  }
  if (config.Flag({"is_decoder"}, false)) {
    config.Note("is_decoder true: counted as the encoder; a causal KV cache is not modelled");
  }
  const bool head_class = NamesHeadClass(g);
  const std::string p(f.prefix);

  g.family = f.family;
  g.vocab = vocab;
  g.hidden = hidden;
  g.max_positions = positions;
  g.base_prefix = p + ".";
  MarkEncoder(g);

  const std::string emb = p + ".embeddings";
  g.embeddings.push_back(
      Table(emb, "word_embeddings.weight", vocab, width, NodeKind::kEmbedding, "token embedding"));
  Node pos = Table(emb, "position_embeddings.weight", positions, width,
                   NodeKind::kPositionEmbedding, "learned position embedding");
  AddPositionIds(pos, positions, head_class && f.position_ids_stored);
  g.embeddings.push_back(std::move(pos));
  if (f.token_types) {
    g.embeddings.push_back(Table(emb, "token_type_embeddings.weight", types, width,
                                 NodeKind::kEmbedding,
                                 "token type embedding (" + std::to_string(types) + " types)"));
  }
  g.embeddings.push_back(Norm(emb + ".LayerNorm", width, NormKind::kLayer, true));
  if (width != hidden) {
    Node project;
    project.kind = NodeKind::kEmbedding;
    project.module = p + ".embeddings_project";
    project.label =
        "embedding projection " + std::to_string(width) + " -> " + std::to_string(hidden);
    project.output_width = hidden;
    AddLinear(project, "", width, hidden, true);
    g.embeddings.push_back(std::move(project));
  }

  const std::string layer = p + ".encoder.layer.{i}";
  AttentionShape shape = EncoderAttention(heads, head_dim);
  shape.dropout = config.Probability({"attention_probs_dropout_prob", "attention_dropout"});
  Node attn = AttentionNode(layer + ".attention", shape);
  attn.output_width = hidden;
  std::string attn_norm;
  if (f.attention == AttentionNames::kBert) {
    for (const char* name : {"self.query", "self.key", "self.value", "output.dense"}) {
      AddLinear(attn, name, hidden, hidden, true);
    }
    if (distance_embedding) {
      AddTensor(attn, "self.distance_embedding.weight", {2 * positions - 1, head_dim});
      attn.label += ", relative distance embedding";
    }
    attn_norm = layer + ".attention.output.LayerNorm";
  } else {
    for (const char* name : {"attn.q", "attn.k", "attn.v", "attn.o"}) {
      AddLinear(attn, name, hidden, hidden, true);
    }
    attn_norm = layer + ".attention.LayerNorm";
  }
  Node mlp = MlpNode(layer, hidden, {inter, false, act});
  AddLinear(mlp, "intermediate.dense", hidden, inter, true);
  AddLinear(mlp, "output.dense", inter, hidden, true);
  g.blocks.push_back(
      {std::string(f.model_type) + " encoder layer (post-LayerNorm)",
       NodeList(std::move(attn), Norm(attn_norm, hidden, NormKind::kLayer, true), std::move(mlp),
                Norm(layer + ".output.LayerNorm", hidden, NormKind::kLayer, true))});
  UniformLayers(g, layers);

  if (f.relative_attention_bias) {
    const int64_t buckets = config.Positive({"relative_attention_num_buckets"}, kMaxPositions, 32,
                                            "relative_attention_num_buckets absent: 32");
    g.final_nodes.push_back(Table(p + ".encoder.relative_attention_bias", "weight", buckets, heads,
                                  NodeKind::kPositionEmbedding,
                                  "relative position bias, " + std::to_string(buckets) +
                                      " buckets x heads, shared by every layer"));
  }
  if (f.pooler) {
    Node pooler =
        HeadNode(p + ".pooler", "pooler: dense + tanh on the first token", hidden, hidden);
    AddLinear(pooler, "dense", hidden, hidden, true);
    if (head_class && !f.pooler_stored) {
      for (TensorSpec& t : pooler.tensors) t.stored = false;
    }
    g.final_nodes.push_back(std::move(pooler));
  }
  if (head_class) {
    AddBertHeads(f, config, g, width, f.head_stored);
    NoteHeads(config, g, f.head_stored);
    if (f.pooler && !f.pooler_stored) {
      config.Note(g.architecture + " checkpoints store no pooler: loading the base model " +
                  "initialises " + p + ".pooler randomly");
    }
  }
}

}  // namespace

void RegisterEncoders(ArchRegistry& registry) {
  for (const BertLike& f : kBertLike) {
    registry.Add(f.model_type, [&f](ConfigReader& config, ModelGraph& graph) {
      BuildBertLike(f, config, graph);
    });
  }
  registry.Add("distilbert", encoder::BuildDistilBert);
  registry.Add("deberta-v2", encoder::BuildDebertaV2);
  registry.Add("modernbert", encoder::BuildModernBert);
}

}  // namespace hubwatch
