// Encoder-decoders, T5 layout: t5 and mt5 as rows of one builder (kT5Like below), mirroring
// T5ForConditionalGeneration / MT5ForConditionalGeneration (transformers' modeling_t5.py): a
// `shared` token embedding, an encoder stack and a decoder stack of pre-RMSNorm blocks
// (T5LayerNorm, no bias) without biases anywhere, relative position buckets learned only by
// block 0 of each stack (relative_attention_bias [buckets, heads], which the other blocks
// reuse), and an lm_head tied to `shared` unless tie_word_embeddings is false (T5 v1.1, mT5,
// ByT5, Flan-T5). Attention is num_heads x d_kv wide, which need not be d_model (ByT5: 6 x 64 =
// 384 against d_model 1472). A T5EncoderModel / MT5EncoderModel config (a text encoder of its
// own) is the encoder stack alone.
//
// The graph has two sections, "encoder" and "decoder" (ModelGraph::sections): the encoder's
// self-attention caches nothing, the decoder's caches its own K and V, and its cross-attention
// (EncDecAttention) holds K and V of every encoder position once per sequence. T5 sets no limit
// on the input length (relative positions); the cross-attention cache is sized at n_positions
// (512 in Flan-T5's config, T5's pre-training input length; 512 when absent, noted).
//
// encoder.embed_tokens / decoder.embed_tokens are `shared` itself: older checkpoints store them
// again, safetensors conversions do not; they are declared as tied copies not stored, and match
// either way. Original T5 checkpoints also store an unused
// decoder.block.0.layer.1.EncDecAttention.relative_attention_bias that transformers ignores on
// load: declared on disk only, not stored.

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/seq2seq_parts.h"

namespace hubwatch {
namespace seq2seq {

AttentionShape Attention(int64_t heads, int64_t head_dim, KvCaching caching, int64_t cross_tokens) {
  AttentionShape shape;
  shape.kind = AttentionKind::kMha;
  shape.heads = shape.kv_heads = heads;
  shape.head_dim = shape.v_head_dim = head_dim;
  shape.caching = caching;
  shape.cross_tokens = caching == KvCaching::kCross ? cross_tokens : 0;
  return shape;
}

void Join(ModelGraph& g, ModelGraph encoder, std::string encoder_label, ModelGraph decoder,
          std::string decoder_label) {
  build::AppendSection(g, std::move(encoder), {"encoder", std::move(encoder_label)});
  build::AppendSection(g, std::move(decoder), {"decoder", std::move(decoder_label)});
  g.decodes = true;
  g.vocab_logits = true;
}

Node TensorNode(NodeKind kind, const std::string& module, const std::string& name,
                TensorShape shape, int64_t width, std::string label) {
  Node n;
  n.kind = kind;
  n.module = module;
  n.label = std::move(label);
  n.output_width = width;
  build::AddTensor(n, name, shape);
  return n;
}

}  // namespace seq2seq

namespace {

using namespace build;  // NOLINT: internal helpers

struct T5Like {
  std::string_view model_type = {};
  std::string_view family = {};
  // T5Config / MT5Config defaults where config.json leaves them out.
  std::string_view feed_forward_proj = "relu";
  bool tie_word_embeddings = true;
};

const T5Like kT5Like[] = {
    // google/byt5-small, google/flan-t5-large, gsarti/it5-small (T5Config defaults: relu, tied).
    {.model_type = "t5",
     .family = "T5 encoder-decoder: relative position buckets in block 0, pre-RMSNorm, no biases"},
    // google/mt5-small (MT5Config defaults: gated-gelu, untied).
    {.model_type = "mt5",
     .family = "mT5 encoder-decoder: T5 v1.1 layout (gated GELU, untied head), 250k vocabulary",
     .feed_forward_proj = "gated-gelu",
     .tie_word_embeddings = false},
};

struct T5Dims {
  int64_t vocab = 0, d_model = 0, heads = 0, d_kv = 0, buckets = 0, cross_tokens = 0;
  MlpShape mlp;
};

// feed_forward_proj as T5Config reads it: "ACT" or "gated-ACT"; "gated-gelu" means gelu_new.
MlpShape ReadFeedForward(ConfigReader& config, const T5Like& f, int64_t d_ff) {
  const std::string proj = config.String({"feed_forward_proj"}, std::string(f.feed_forward_proj));
  const size_t dash = proj.find('-');
  MlpShape mlp{d_ff, false, proj};
  if (dash != std::string::npos) {
    mlp.gated = proj.substr(0, dash) == "gated";
    mlp.activation = proj.substr(dash + 1);
    if (!mlp.gated || mlp.activation.empty() || mlp.activation.find('-') != std::string::npos) {
      config.Fail("feed_forward_proj must be ACT or gated-ACT (\"relu\", \"gated-gelu\")");
    }
  }
  if (mlp.gated && mlp.activation == "gelu") mlp.activation = "gelu_new";
  return mlp;
}

Node T5Attention(const std::string& module, const T5Dims& d, KvCaching caching) {
  Node n = AttentionNode(module, seq2seq::Attention(d.heads, d.d_kv, caching, d.cross_tokens));
  n.output_width = d.d_model;
  const int64_t inner = d.heads * d.d_kv;
  for (const char* name : {"q", "k", "v"}) AddLinear(n, name, d.d_model, inner, false);
  AddLinear(n, "o", inner, d.d_model, false);
  return n;
}

// Block `first` of a stack ("encoder" / "decoder"): layer.0 self-attention, (decoder) layer.1
// EncDecAttention, then DenseReluDense, each after its own layer_norm. Block 0 learns the
// relative position buckets of its stack's self-attention.
BlockTemplate T5Block(const T5Dims& d, const std::string& stack, bool first) {
  const bool decoder = stack == "decoder";
  const std::string block = stack + ".block.{i}.layer.";
  std::vector<Node> nodes;
  auto norm = [&](int sub) {
    nodes.push_back(
        Norm(block + std::to_string(sub) + ".layer_norm", d.d_model, NormKind::kRms, false));
  };
  Node self =
      T5Attention(block + "0.SelfAttention", d, decoder ? KvCaching::kSelf : KvCaching::kNone);
  if (first) {
    AddTensor(self, "relative_attention_bias.weight", {d.buckets, d.heads});
    self.label += ", relative position bias (" + std::to_string(d.buckets) + " buckets)";
  }
  nodes.push_back(std::move(self));
  norm(0);
  int sub = 1;
  if (decoder) {
    Node cross = T5Attention(block + "1.EncDecAttention", d, KvCaching::kCross);
    cross.label = "cross-attention, " + cross.label;
    if (first) {
      AddTensor(cross, "relative_attention_bias.weight", {d.buckets, d.heads},
                TensorRole::kExtraOnDisk)
          .stored = false;
    }
    nodes.push_back(std::move(cross));
    norm(sub++);
  }
  Node mlp = MlpNode(block + std::to_string(sub) + ".DenseReluDense", d.d_model, d.mlp);
  if (d.mlp.gated) {
    AddLinear(mlp, "wi_0", d.d_model, d.mlp.intermediate, false);
    AddLinear(mlp, "wi_1", d.d_model, d.mlp.intermediate, false);
  } else {
    AddLinear(mlp, "wi", d.d_model, d.mlp.intermediate, false);
  }
  AddLinear(mlp, "wo", d.mlp.intermediate, d.d_model, false);
  nodes.push_back(std::move(mlp));
  norm(sub);
  return {"T5 " + stack + " block" + (first ? " 0 (relative position bias)" : ""),
          std::move(nodes)};
}

// One stack: its tied view of `shared`, block 0 for layer 0 and one template for the rest, and
// its final_layer_norm.
ModelGraph T5Stack(const T5Dims& d, const std::string& stack, int64_t layers) {
  ModelGraph part;
  Node tokens;
  tokens.kind = NodeKind::kEmbedding;
  tokens.module = stack + ".embed_tokens";
  tokens.label = "token embedding (the shared one)";
  tokens.output_width = d.d_model;
  AddTensor(tokens, "weight", {d.vocab, d.d_model}, TensorRole::kTiedCopy).stored = false;
  part.embeddings.push_back(std::move(tokens));
  part.blocks.push_back(T5Block(d, stack, true));
  if (layers > 1) part.blocks.push_back(T5Block(d, stack, false));
  for (int64_t i = 0; i < layers; ++i) part.layers.push_back({i == 0 ? 0 : 1, 0, -1});
  part.final_nodes.push_back(Norm(stack + ".final_layer_norm", d.d_model, NormKind::kRms, false));
  return part;
}

void BuildT5Like(const T5Like& f, ConfigReader& config, ModelGraph& g) {
  T5Dims d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.d_model = config.Positive({"d_model"}, kMaxWidth);
  d.heads = config.Positive({"num_heads"}, kMaxHeads);
  d.d_kv = config.Positive({"d_kv"}, kMaxWidth, 64, "d_kv absent: 64 (T5Config's default)");
  const int64_t layers = config.Positive({"num_layers"}, kMaxLayers);
  const bool encoder_only = g.architecture.ends_with("EncoderModel");
  const int64_t decoder_layers =
      encoder_only ? 0
                   : config.Positive({"num_decoder_layers"}, kMaxLayers, layers,
                                     "num_decoder_layers absent: num_layers, as T5Config does");
  d.buckets = config.Positive({"relative_attention_num_buckets"}, kMaxPositions, 32,
                              "relative_attention_num_buckets absent: 32 (the default)");
  d.mlp = ReadFeedForward(config, f, config.Positive({"d_ff"}, kMaxWidth));
  d.cross_tokens = config.Positive({"n_positions"}, kMaxPositions, 512,
                                   "n_positions absent: inputs of 512 positions (T5's "
                                   "pre-training input length)");
  const bool tied = config.Flag({"tie_word_embeddings"}, f.tie_word_embeddings);
  if (!config.ok()) return;

  g.family = f.family;
  g.vocab = d.vocab;
  g.hidden = d.d_model;
  g.max_positions = d.cross_tokens;
  ModelGraph encoder = T5Stack(d, "encoder", layers);
  encoder.embeddings.insert(encoder.embeddings.begin(),
                            Embedding("shared", d.vocab, d.d_model, "shared token embedding"));
  if (encoder_only) {  // T5EncoderModel: the encoder stack is the whole model
    g.family += " (encoder only)";
    g.embeddings = std::move(encoder.embeddings);
    g.blocks = std::move(encoder.blocks);
    g.layers = std::move(encoder.layers);
    g.final_nodes = std::move(encoder.final_nodes);
    g.decodes = g.vocab_logits = g.tied = false;
    return;
  }
  ModelGraph decoder = T5Stack(d, "decoder", decoder_layers);
  Node head = Head("lm_head", d.vocab, d.d_model, tied, false, false);
  if (tied) AddTensor(head, "weight", {d.vocab, d.d_model}, TensorRole::kTiedCopy).stored = false;
  decoder.final_nodes.push_back(std::move(head));
  const std::string width = std::to_string(d.d_model);
  seq2seq::Join(g, std::move(encoder),
                "T5 encoder, " + std::to_string(layers) + " blocks, d_model " + width,
                std::move(decoder),
                "T5 decoder, " + std::to_string(decoder_layers) + " blocks with cross-attention");
  g.tied = tied;
  g.notes.push_back("cross-attention caches K and V of " + std::to_string(d.cross_tokens) +
                    " encoder positions per sequence (n_positions; T5's relative positions set "
                    "no hard limit on the input)");
}

}  // namespace

void RegisterSeq2Seq(ArchRegistry& registry) {
  for (const T5Like& f : kT5Like) {
    registry.Add(f.model_type,
                 [&f](ConfigReader& config, ModelGraph& graph) { BuildT5Like(f, config, graph); });
  }
  seq2seq::RegisterBartFamily(registry);
}

}  // namespace hubwatch
