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
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Whether config.json names a class with a masked-LM / pretraining head, whose checkpoint then
// stores that head besides the base model.
bool NamesHeadClass(const ModelGraph& g) {
  return EndsWith(g.architecture, "ForMaskedLM") || EndsWith(g.architecture, "ForPreTraining");
}

void MarkEncoder(ModelGraph& g) {
  g.decodes = false;
  g.vocab_logits = false;
  g.tied = false;  // the modelled base model has no output head to tie
}

AttentionShape EncoderAttention(int64_t heads, int64_t head_dim) {
  AttentionShape shape;
  shape.kind = AttentionKind::kMha;
  shape.heads = shape.kv_heads = heads;
  shape.head_dim = shape.v_head_dim = head_dim;
  shape.caching = KvCaching::kNone;
  return shape;
}

// A lookup table: the tensor "<module>.<tensor>" [rows, width].
Node Table(const std::string& module, const std::string& tensor, int64_t rows, int64_t width,
           NodeKind kind, std::string label) {
  Node n;
  n.kind = kind;
  n.module = module;
  n.label = std::move(label);
  n.output_width = width;
  AddTensor(n, tensor, {rows, width});
  return n;
}

// The position_ids buffer [1, positions] (int64) BERT-style embeddings register; transformers
// no longer saves it (persistent=False), checkpoints from older versions do.
void AddPositionIds(Node& n, int64_t positions, bool stored) {
  TensorSpec& t = AddTensor(n, "position_ids", {1, positions}, TensorRole::kBuffer);
  t.dtype = "I64";
  t.stored = stored;
}

// Turns the parameters of a head node into what a base model does not load but a checkpoint of
// the head class stores.
Node OnDiskOnly(Node n, bool stored) {
  for (TensorSpec& t : n.tensors) {
    if (t.role == TensorRole::kParameter) t.role = TensorRole::kExtraOnDisk;
    t.stored = t.stored && stored;
  }
  return n;
}

// Says which head the checkpoint stores beside the base model (the extra_nodes).
void NoteHeads(ConfigReader& config, const ModelGraph& g, bool stored) {
  std::string modules;
  for (const Node& n : g.extra_nodes) modules += (modules.empty() ? "" : ", ") + n.module;
  config.Note(stored
                  ? "parameters are the base model's (what AutoModel loads); a " + g.architecture +
                        " checkpoint also stores " + modules + ", counted on disk only"
                  : "parameters are the base model's (what AutoModel loads); the " +
                        g.architecture + " head (" + modules +
                        ") is declared, but this family's reference checkpoint (a bare base model) "
                        "does not store it");
}

Node HeadNode(const std::string& module, std::string label, int64_t in, int64_t out) {
  Node n;
  n.kind = NodeKind::kHead;
  n.module = module;
  n.label = std::move(label);
  n.input_width = in;
  n.output_width = out;
  return n;
}

// A decoder weight tied to the token embedding: transformers saves it once, under the
// embedding's name. Untied, it is a weight of its own that the head class stores.
void AddDecoderWeight(Node& n, const std::string& name, int64_t vocab, int64_t width, bool tied) {
  TensorSpec& t =
      AddTensor(n, name, {vocab, width}, tied ? TensorRole::kTiedCopy : TensorRole::kParameter);
  t.stored = !tied;
}

// "<name>.weight" (and ".bias") [width]; an empty name adds "weight" itself.
void AddLayerNorm(Node& n, const std::string& name, int64_t width, bool bias) {
  const std::string prefix = name.empty() ? "" : name + ".";
  AddTensor(n, prefix + "weight", {width});
  if (bias) AddTensor(n, prefix + "bias", {width});
}

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
      if (EndsWith(g.architecture, "ForPreTraining")) {
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
  Node attn = AttentionNode(layer + ".attention", EncoderAttention(heads, head_dim));
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

// ---------------------------------------------------------------------------------------------
// DistilBERT: BERT distilled to half the layers, with its own names (dim, n_layers, q_lin...,
// sa_layer_norm, ffn.lin1/lin2, output_layer_norm), no token types and no pooler.

void BuildDistilBert(ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t dim = config.Positive({"dim"}, kMaxWidth);
  const int64_t layers = config.Positive({"n_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"n_heads"}, kMaxHeads);
  const int64_t inter = config.Positive({"hidden_dim"}, kMaxWidth);
  const int64_t positions = config.Positive({"max_position_embeddings"}, kMaxPositions, 512,
                                            "max_position_embeddings absent: 512 (the default)");
  const std::string act = config.String({"activation"}, "gelu");
  const bool sinusoidal = config.Flag({"sinusoidal_pos_embds"}, false);
  if (dim % heads != 0) config.Fail("dim is not divisible by n_heads");
  g.family = "DistilBERT encoder: BERT layout with half the layers, no token types, no pooler";
  g.vocab = vocab;
  g.hidden = dim;
  g.max_positions = positions;
  g.base_prefix = "distilbert.";
  MarkEncoder(g);

  const std::string emb = "distilbert.embeddings";
  g.embeddings.push_back(
      Table(emb, "word_embeddings.weight", vocab, dim, NodeKind::kEmbedding, "token embedding"));
  Node pos = Table(emb, "position_embeddings.weight", positions, dim, NodeKind::kPositionEmbedding,
                   sinusoidal ? "sinusoidal position embedding (a frozen parameter)"
                              : "learned position embedding");
  AddPositionIds(pos, positions, false);
  g.embeddings.push_back(std::move(pos));
  g.embeddings.push_back(Norm(emb + ".LayerNorm", dim, NormKind::kLayer, true));

  const std::string layer = "distilbert.transformer.layer.{i}";
  Node attn = AttentionNode(layer + ".attention", EncoderAttention(heads, dim / heads));
  attn.output_width = dim;
  for (const char* name : {"q_lin", "k_lin", "v_lin", "out_lin"}) {
    AddLinear(attn, name, dim, dim, true);
  }
  Node ffn = MlpNode(layer + ".ffn", dim, {inter, false, act});
  AddLinear(ffn, "lin1", dim, inter, true);
  AddLinear(ffn, "lin2", inter, dim, true);
  g.blocks.push_back(
      {"distilbert encoder layer (post-LayerNorm)",
       NodeList(std::move(attn), Norm(layer + ".sa_layer_norm", dim, NormKind::kLayer, true),
                std::move(ffn), Norm(layer + ".output_layer_norm", dim, NormKind::kLayer, true))});
  UniformLayers(g, layers);

  if (NamesHeadClass(g)) {
    const bool tied = config.Flag({"tie_word_embeddings"}, true);
    Node transform = HeadNode("vocab_transform", "MLM transform", dim, dim);
    AddLinear(transform, "", dim, dim, true);
    Node norm = HeadNode("vocab_layer_norm", "MLM LayerNorm", dim, dim);
    AddLayerNorm(norm, "", dim, true);
    Node projector = HeadNode("vocab_projector", "MLM decoder (tied)", dim, vocab);
    AddDecoderWeight(projector, "weight", vocab, dim, tied);
    AddTensor(projector, "bias", {vocab});
    for (Node* n : {&transform, &norm, &projector}) {
      g.extra_nodes.push_back(OnDiskOnly(std::move(*n), true));
    }
    NoteHeads(config, g, true);
  }
}

// ---------------------------------------------------------------------------------------------
// DeBERTa-v2/v3: disentangled attention. No absolute positions unless position_biased_input;
// relative embeddings rel_embeddings [2 * span, hidden] (span = position_buckets, else
// max_relative_positions, else max_position_embeddings) shared by every layer, normalised by
// the encoder's LayerNorm when norm_rel_ebd has "layer_norm"; without share_att_key each layer
// projects them with pos_key_proj (c2p) and pos_query_proj (p2c). An optional ConvLayer after
// the first layer (conv_kernel_size > 0).

// An integer that may be negative (-1 means "unset" for DeBERTa's relative spans).
int64_t SignedInt(ConfigReader& config, std::string_view key, int64_t fallback) {
  const nlohmann::json* v = config.Find({key});
  if (!v) return fallback;
  if (!v->is_number_integer() || v->get<int64_t>() > kMaxPositions ||
      v->get<int64_t>() < -kMaxPositions) {
    config.Fail(std::string(key) + " must be an integer of at most " +
                std::to_string(kMaxPositions));
    return fallback;
  }
  return v->get<int64_t>();
}

// pos_att_type: "p2c|c2p" (the original hand-written configs) or ["p2c", "c2p"].
std::vector<std::string> PosAttTypes(ConfigReader& config) {
  std::vector<std::string> types;
  const nlohmann::json* v = config.Find({"pos_att_type"});
  if (!v) return types;
  auto add = [&](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
    if (b != std::string::npos) types.push_back(s.substr(b, e - b + 1));
  };
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    for (size_t start = 0;;) {
      const size_t bar = s.find('|', start);
      add(s.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
  } else if (v->is_array()) {
    for (const nlohmann::json& item : *v) {
      if (!item.is_string()) {
        config.Fail("pos_att_type must hold strings");
        return types;
      }
      add(item.get<std::string>());
    }
  } else {
    config.Fail("pos_att_type must be a string or a list of strings");
  }
  return types;
}

void BuildDebertaV2(ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"hidden_size"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  const int64_t inter = config.Positive({"intermediate_size"}, kMaxWidth);
  const int64_t positions = config.Positive({"max_position_embeddings"}, kMaxPositions, 512,
                                            "max_position_embeddings absent: 512 (the default)");
  const int64_t width = config.Positive({"embedding_size"}, kMaxWidth, hidden);
  const int64_t types = config.NonNegative({"type_vocab_size"}, kMaxVocab, 0);
  const bool position_biased = config.Flag({"position_biased_input"}, true);
  const bool relative = config.Flag({"relative_attention"}, false);
  const bool share_att_key = config.Flag({"share_att_key"}, false);
  const std::vector<std::string> att_types = PosAttTypes(config);
  auto has_type = [&](const char* t) {
    return std::find(att_types.begin(), att_types.end(), t) != att_types.end();
  };
  const std::string norm_rel_ebd = config.String({"norm_rel_ebd"}, "none");
  const int64_t conv_kernel = config.NonNegative({"conv_kernel_size"}, kMaxWidth, 0);
  const int64_t conv_groups = config.Positive({"conv_groups"}, kMaxWidth, 1);
  const std::string act = config.String({"hidden_act"}, "gelu");
  if (hidden % heads != 0) config.Fail("hidden_size is not divisible by num_attention_heads");
  const int64_t head_dim = config.Positive({"attention_head_size"}, kMaxWidth, hidden / heads);
  const int64_t all_heads = heads * head_dim;
  if (conv_kernel > 0 && hidden % conv_groups != 0) {
    config.Fail("hidden_size is not divisible by conv_groups");
  }
  int64_t span = SignedInt(config, "max_relative_positions", -1);
  if (span < 1) span = positions;
  if (const int64_t buckets = SignedInt(config, "position_buckets", -1); buckets > 0) {
    span = buckets;
  }

  g.family = std::string("DeBERTa-v2 encoder: disentangled attention") +
             (relative ? " over shared relative position embeddings" : "") +
             (position_biased ? ", learned absolute positions" : ", no absolute positions") +
             ", post-LayerNorm, GELU MLP, no pooler";
  g.vocab = vocab;
  g.hidden = hidden;
  g.max_positions = positions;
  g.base_prefix = "deberta.";
  MarkEncoder(g);

  const std::string emb = "deberta.embeddings";
  g.embeddings.push_back(
      Table(emb, "word_embeddings.weight", vocab, width, NodeKind::kEmbedding, "token embedding"));
  if (position_biased) {
    g.embeddings.push_back(Table(emb, "position_embeddings.weight", positions, width,
                                 NodeKind::kPositionEmbedding, "learned position embedding"));
  }
  // A persistent buffer in transformers < 4.31, whatever position_biased_input says.
  AddPositionIds(g.embeddings.back(), positions, false);
  if (types > 0) {
    g.embeddings.push_back(Table(emb, "token_type_embeddings.weight", types, width,
                                 NodeKind::kEmbedding,
                                 "token type embedding (" + std::to_string(types) + " types)"));
  }
  if (width != hidden) {
    Node project;
    project.kind = NodeKind::kEmbedding;
    project.module = emb + ".embed_proj";
    project.label =
        "embedding projection " + std::to_string(width) + " -> " + std::to_string(hidden);
    project.output_width = hidden;
    AddLinear(project, "", width, hidden, false);
    g.embeddings.push_back(std::move(project));
  }
  g.embeddings.push_back(Norm(emb + ".LayerNorm", hidden, NormKind::kLayer, true));

  const std::string layer = "deberta.encoder.layer.{i}";
  Node attn = AttentionNode(layer + ".attention", EncoderAttention(heads, head_dim));
  attn.output_width = hidden;
  for (const char* name : {"self.query_proj", "self.key_proj", "self.value_proj"}) {
    AddLinear(attn, name, hidden, all_heads, true);
  }
  if (relative && !share_att_key) {
    if (has_type("c2p")) AddLinear(attn, "self.pos_key_proj", hidden, all_heads, true);
    if (has_type("p2c")) AddLinear(attn, "self.pos_query_proj", hidden, all_heads, true);
  }
  AddLinear(attn, "output.dense", hidden, hidden, true);
  if (relative) {
    std::string kinds;
    for (const std::string& t : att_types) kinds += (kinds.empty() ? "" : "+") + t;
    attn.label += ", disentangled (" + (kinds.empty() ? std::string("content only") : kinds) +
                  (share_att_key ? ", shared key projections" : "") + ")";
  }
  Node mlp = MlpNode(layer, hidden, {inter, false, act});
  AddLinear(mlp, "intermediate.dense", hidden, inter, true);
  AddLinear(mlp, "output.dense", inter, hidden, true);
  g.blocks.push_back(
      {"deberta-v2 encoder layer (post-LayerNorm)",
       NodeList(std::move(attn),
                Norm(layer + ".attention.output.LayerNorm", hidden, NormKind::kLayer, true),
                std::move(mlp),
                Norm(layer + ".output.LayerNorm", hidden, NormKind::kLayer, true))});
  UniformLayers(g, layers);

  // Encoder-level tensors, in checkpoint order after the layers.
  if (relative) {
    g.final_nodes.push_back(Table("deberta.encoder.rel_embeddings", "weight", 2 * span, hidden,
                                  NodeKind::kPositionEmbedding,
                                  "relative position embedding, 2 x " + std::to_string(span) +
                                      " positions, shared by every layer"));
  }
  if (norm_rel_ebd.find("layer_norm") != std::string::npos) {
    Node norm = Norm("deberta.encoder.LayerNorm", hidden, NormKind::kLayer, true);
    norm.label += " of the relative embeddings";
    norm.saves_input = false;  // normalises the relative table, not the tokens
    g.final_nodes.push_back(std::move(norm));
  }
  if (conv_kernel > 0) {
    Node conv;
    conv.kind = NodeKind::kOpaque;
    conv.module = "deberta.encoder.conv";
    conv.label = "Conv1d (kernel " + std::to_string(conv_kernel) + ") + LayerNorm after layer 0";
    conv.output_width = hidden;
    AddTensor(conv, "conv.weight", {hidden, hidden / conv_groups, conv_kernel});
    AddTensor(conv, "conv.bias", {hidden});
    AddLayerNorm(conv, "LayerNorm", hidden, true);
    g.final_nodes.push_back(std::move(conv));
  }
}

// ---------------------------------------------------------------------------------------------
// ModernBERT: pre-LayerNorm (layer 0 has none: the embeddings are normalised already), fused
// Wqkv, GeGLU MLP with fused Wi, no biases by default, RoPE, every
// global_attn_every_n_layers-th layer global and the rest local (local_attention tokens), a
// final_norm.

void BuildModernBert(ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"hidden_size"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  const int64_t inter = config.Positive({"intermediate_size"}, kMaxWidth);
  const std::string act = config.String({"hidden_activation"}, "gelu");
  const bool attention_bias = config.Flag({"attention_bias"}, false);
  const bool mlp_bias = config.Flag({"mlp_bias"}, false);
  const bool norm_bias = config.Flag({"norm_bias"}, false);
  const int64_t global_every = config.Positive({"global_attn_every_n_layers"}, kMaxLayers, 3,
                                               "global_attn_every_n_layers absent: 3");
  const int64_t local =
      config.Positive({"local_attention"}, kMaxPositions, 128, "local_attention absent: 128");
  if (hidden % heads != 0) config.Fail("hidden_size is not divisible by num_attention_heads");
  g.family =
      "ModernBERT encoder: pre-LayerNorm without biases, fused Wqkv, GeGLU MLP, RoPE, "
      "global attention every " +
      std::to_string(global_every) + " layers, local (" + std::to_string(local) +
      " tokens) otherwise";
  g.vocab = vocab;
  g.hidden = hidden;
  g.max_positions = config.Positive({"max_position_embeddings"}, kMaxPositions, 8192,
                                    "max_position_embeddings absent: 8192 (the default)");
  g.base_prefix = "model.";
  MarkEncoder(g);

  g.embeddings.push_back(
      Embedding("model.embeddings.tok_embeddings", vocab, hidden, "token embedding"));
  g.embeddings.push_back(Norm("model.embeddings.norm", hidden, NormKind::kLayer, norm_bias));

  const std::string layer = "model.layers.{i}";
  Node attn = AttentionNode(layer + ".attn", EncoderAttention(heads, hidden / heads));
  attn.output_width = hidden;
  attn.label += ", RoPE";
  AddLinear(attn, "Wqkv", hidden, 3 * hidden, attention_bias);
  AddLinear(attn, "Wo", hidden, hidden, attention_bias);
  Node mlp = MlpNode(layer + ".mlp", hidden, {inter, true, act});
  AddLinear(mlp, "Wi", hidden, 2 * inter, mlp_bias);
  AddLinear(mlp, "Wo", inter, hidden, mlp_bias);
  Node mlp_norm = Norm(layer + ".mlp_norm", hidden, NormKind::kLayer, norm_bias);
  // Block 0: layer 0, whose attn_norm is an Identity. Block 1: every other layer.
  g.blocks.push_back({"modernbert layer 0 (no attn_norm)", NodeList(attn, mlp_norm, mlp)});
  g.blocks.push_back(
      {"modernbert layer", NodeList(Norm(layer + ".attn_norm", hidden, NormKind::kLayer, norm_bias),
                                    std::move(attn), std::move(mlp_norm), std::move(mlp))});
  for (int64_t i = 0; i < layers; ++i) {
    // transformers: local_attention = (w/2, w/2) unless layer_id % global_attn_every_n_layers == 0.
    g.layers.push_back({.block = i == 0 ? 0 : 1, .window = i % global_every == 0 ? 0 : local});
  }
  g.final_nodes.push_back(Norm("model.final_norm", hidden, NormKind::kLayer, norm_bias));

  if (NamesHeadClass(g)) {
    const bool tied = config.Flag({"tie_word_embeddings"}, true);
    Node head = HeadNode("head", "MLM transform (dense, act, norm)", hidden, hidden);
    AddLinear(head, "dense", hidden, hidden, config.Flag({"classifier_bias"}, false));
    AddLayerNorm(head, "norm", hidden, norm_bias);
    Node decoder = HeadNode("decoder", "MLM decoder (tied)", hidden, vocab);
    AddDecoderWeight(decoder, "weight", vocab, hidden, tied);
    if (config.Flag({"decoder_bias"}, true)) AddTensor(decoder, "bias", {vocab});
    g.extra_nodes.push_back(OnDiskOnly(std::move(head), true));
    g.extra_nodes.push_back(OnDiskOnly(std::move(decoder), true));
    NoteHeads(config, g, true);
  }
}

}  // namespace

void RegisterEncoders(ArchRegistry& registry) {
  for (const BertLike& f : kBertLike) {
    registry.Add(f.model_type, [&f](ConfigReader& config, ModelGraph& graph) {
      BuildBertLike(f, config, graph);
    });
  }
  registry.Add("distilbert", BuildDistilBert);
  registry.Add("deberta-v2", BuildDebertaV2);
  registry.Add("modernbert", BuildModernBert);
}

}  // namespace hubwatch
