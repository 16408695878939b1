// Encoders with layouts of their own: DistilBERT, DeBERTa-v2/v3 and ModernBERT (the BERT layout
// and its rows are arch_encoder.cc). What is counted and why: arch_encoder.cc's header comment.

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/encoder_parts.h"
#include "estimator/graph_builder.h"

namespace hubwatch::encoder {

using namespace build;  // NOLINT: internal helpers
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

}  // namespace hubwatch::encoder
