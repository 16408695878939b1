// Encoder-decoders, BART layout: bart, marian and whisper as rows of one builder (kBartLike
// below), mirroring BartForConditionalGeneration, MarianMTModel and
// WhisperForConditionalGeneration. Each holds model.encoder and model.decoder of layers named
// self_attn (q/k/v/out_proj), self_attn_layer_norm, (decoder) encoder_attn +
// encoder_attn_layer_norm, fc1, fc2 and final_layer_norm, all Linear and LayerNorm with biases
// (Whisper's k_proj has none). What differs is the input side and the norms:
//  - BART: model.shared tied to both stacks' embed_tokens and to lm_head; learned positions of
//    max_position_embeddings + 2 rows (BartLearnedPositionalEmbedding's offset);
//    layernorm_embedding after the embeddings; post-LayerNorm layers.
//  - Marian: model.shared as BART (or embed_tokens per stack when
//    share_encoder_decoder_embeddings is false); sinusoidal positions of max_position_embeddings
//    rows (MarianSinusoidalPositionalEmbedding: an nn.Embedding whose weight is a parameter with
//    requires_grad False, so counted, and listed in _keys_to_ignore_on_save, so not stored);
//    post-LayerNorm, no embedding norm.
//  - Whisper: an audio front end (conv1: num_mel_bins -> d_model, conv2 stride 2, kernel 3),
//    encoder embed_positions of max_source_positions rows (sinusoidal values, but an
//    nn.Embedding with requires_grad False: a parameter, and stored), decoder embed_tokens and
//    learned embed_positions of max_target_positions rows, pre-LayerNorm layers with a final
//    layer_norm per stack, proj_out tied to the decoder's embed_tokens.
// BART and Marian register final_logits_bias [1, vocab] as a buffer the checkpoints store.
//
// Sections "encoder" and "decoder" as for T5 (arch_seq2seq.cc). The cross-attention cache holds
// K and V of the most encoder positions an input can have: max_position_embeddings (BART,
// Marian: their position tables end there) or max_source_positions (Whisper: every input is 30
// s of audio, always 1500 positions).

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/seq2seq_parts.h"

namespace hubwatch::seq2seq {
namespace {

using namespace build;  // NOLINT: internal helpers

enum class Inputs {
  kBart,     // model.shared, learned positions with an offset of 2, layernorm_embedding
  kMarian,   // model.shared (or per stack), sinusoidal positions not stored
  kWhisper,  // conv1/conv2 + encoder positions; decoder embed_tokens + positions
};

struct BartLike {
  std::string_view model_type = {};
  std::string_view family = {};
  Inputs inputs = Inputs::kBart;
  std::string_view head = "lm_head";
};

const BartLike kBartLike[] = {
    // facebook/bart-base (BartForConditionalGeneration; 139,420,416 as BartModel too).
    {.model_type = "bart",
     .family = "BART encoder-decoder: learned positions, embedding LayerNorm, post-LayerNorm, "
               "GELU MLP, head tied to the shared embedding"},
    // Helsinki-NLP/opus-mt-* (MarianMTModel).
    {.model_type = "marian",
     .family = "Marian encoder-decoder: sinusoidal positions, post-LayerNorm, head tied to the "
               "shared embedding",
     .inputs = Inputs::kMarian},
    // openai/whisper-* (WhisperForConditionalGeneration).
    {.model_type = "whisper",
     .family = "Whisper speech encoder-decoder: log-mel convolutions, pre-LayerNorm, proj_out "
               "tied to the decoder embedding",
     .inputs = Inputs::kWhisper,
     .head = "proj_out"},
};

struct StackDims {
  int64_t layers = 0, heads = 0, ffn = 0;
};

struct BartDims {
  int64_t vocab = 0, decoder_vocab = 0, d_model = 0, encoder_positions = 0, decoder_positions = 0,
          mel_bins = 0;
  StackDims encoder, decoder;
  std::string activation;
  bool shared = true;  // one model.shared for both stacks
  bool tied = true;
};

BartDims ReadDims(const BartLike& f, ConfigReader& config) {
  BartDims d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.d_model = config.Positive({"d_model"}, kMaxWidth);
  auto stack = [&](const char* layers, const char* heads, const char* ffn) {
    return StackDims{config.Positive({layers}, kMaxLayers), config.Positive({heads}, kMaxHeads),
                     config.Positive({ffn}, kMaxWidth)};
  };
  d.encoder = stack("encoder_layers", "encoder_attention_heads", "encoder_ffn_dim");
  d.decoder = stack("decoder_layers", "decoder_attention_heads", "decoder_ffn_dim");
  d.activation = config.String({"activation_function"}, "gelu");
  d.tied = config.Flag({"tie_word_embeddings"}, true);
  d.decoder_vocab = d.vocab;
  if (f.inputs == Inputs::kWhisper) {
    d.encoder_positions = config.Positive({"max_source_positions"}, kMaxPositions, 1500,
                                          "max_source_positions absent: 1500 (30 s of audio)");
    d.decoder_positions = config.Positive({"max_target_positions"}, kMaxPositions, 448,
                                          "max_target_positions absent: 448 (the default)");
    d.mel_bins = config.Positive({"num_mel_bins"}, kMaxWidth, 80, "num_mel_bins absent: 80");
    d.shared = false;
  } else {
    d.encoder_positions = d.decoder_positions =
        config.Positive({"max_position_embeddings"}, kMaxPositions, 1024,
                        "max_position_embeddings absent: 1024 (the default)");
  }
  if (f.inputs == Inputs::kMarian) {
    // MarianMTModel's target vocabulary: vocab_size when the stacks share model.shared (then
    // decoder_vocab_size is not read), else decoder_vocab_size.
    d.shared = config.Flag({"share_encoder_decoder_embeddings"}, true);
    if (!d.shared) d.decoder_vocab = config.Positive({"decoder_vocab_size"}, kMaxVocab, d.vocab);
  }
  for (int64_t heads : {d.encoder.heads, d.decoder.heads}) {
    if (d.d_model % heads != 0) {
      config.Fail("d_model " + std::to_string(d.d_model) +
                  " is not divisible by the attention heads " + std::to_string(heads));
    }
  }
  return d;
}

Node Attn(const std::string& module, const BartDims& d, const BartLike& f, int64_t heads,
          KvCaching caching) {
  Node n = AttentionNode(module, Attention(heads, d.d_model / heads, caching, d.encoder_positions));
  if (caching == KvCaching::kCross) n.label = "cross-attention, " + n.label;
  n.output_width = d.d_model;
  for (const char* name : {"k_proj", "v_proj", "q_proj", "out_proj"}) {
    const bool bias = f.inputs != Inputs::kWhisper || std::string_view(name) != "k_proj";
    AddLinear(n, name, d.d_model, d.d_model, bias);
  }
  return n;
}

// One layer template of a stack: post-LayerNorm (BART, Marian) or pre-LayerNorm (Whisper).
BlockTemplate Layer(const BartDims& d, const BartLike& f, const std::string& stack) {
  const bool decoder = stack == "decoder";
  const StackDims& s = decoder ? d.decoder : d.encoder;
  const std::string layer = "model." + stack + ".layers.{i}";
  const bool pre_norm = f.inputs == Inputs::kWhisper;
  auto norm = [&](const char* name) {
    return Norm(layer + "." + name, d.d_model, NormKind::kLayer, true);
  };
  std::vector<std::vector<Node>> steps;  // each step: its sublayer, then (post-norm) its norm
  steps.push_back(NodeList(
      Attn(layer + ".self_attn", d, f, s.heads, decoder ? KvCaching::kSelf : KvCaching::kNone),
      norm("self_attn_layer_norm")));
  if (decoder) {
    steps.push_back(NodeList(Attn(layer + ".encoder_attn", d, f, s.heads, KvCaching::kCross),
                             norm("encoder_attn_layer_norm")));
  }
  Node mlp = MlpNode(layer, d.d_model, {s.ffn, false, d.activation});
  AddLinear(mlp, "fc1", d.d_model, s.ffn, true);
  AddLinear(mlp, "fc2", s.ffn, d.d_model, true);
  steps.push_back(NodeList(std::move(mlp), norm("final_layer_norm")));
  BlockTemplate block{std::string(f.model_type) + " " + stack + " layer (" +
                          (pre_norm ? "pre" : "post") + "-LayerNorm)",
                      {}};
  for (std::vector<Node>& step : steps) {
    if (pre_norm) std::swap(step[0], step[1]);
    for (Node& n : step) block.nodes.push_back(std::move(n));
  }
  return block;
}

Node Positions(const BartLike& f, const std::string& stack, int64_t rows, int64_t width) {
  const std::string label = f.inputs == Inputs::kMarian ? "sinusoidal position table"
                            : f.inputs == Inputs::kBart ? "learned position embedding (offset 2)"
                            : stack == "encoder"        ? "sinusoidal position table (frozen)"
                                                        : "learned position embedding";
  Node n = TensorNode(NodeKind::kPositionEmbedding, "model." + stack + ".embed_positions", "weight",
                      {rows, width}, width, label);
  // MarianMTModel._keys_to_ignore_on_save: recomputed at load, never saved.
  n.tensors.back().stored = f.inputs != Inputs::kMarian;
  return n;
}

// The embeddings of one stack: token table (or its tied view of model.shared), positions, and
// BART's layernorm_embedding; Whisper's encoder reads log-mel frames through two convolutions.
void AddInputs(const BartDims& d, const BartLike& f, const std::string& stack, ModelGraph& part) {
  const bool decoder = stack == "decoder";
  const std::string prefix = "model." + stack + ".";
  const int64_t vocab = decoder ? d.decoder_vocab : d.vocab;
  if (f.inputs == Inputs::kWhisper && !decoder) {
    Node front = TensorNode(NodeKind::kEmbedding, "model.encoder", "conv1.weight",
                            {d.d_model, d.mel_bins, 3}, d.d_model,
                            "log-mel front end: conv1 (" + std::to_string(d.mel_bins) +
                                " bins, kernel 3), conv2 (kernel 3, stride 2), GELU");
    AddTensor(front, "conv1.bias", {d.d_model});
    AddTensor(front, "conv2.weight", {d.d_model, d.d_model, 3});
    AddTensor(front, "conv2.bias", {d.d_model});
    part.embeddings.push_back(std::move(front));
  } else if (d.shared) {
    Node tokens = TensorNode(NodeKind::kEmbedding, prefix + "embed_tokens", "weight",
                             {vocab, d.d_model}, d.d_model, "token embedding (model.shared)");
    tokens.tensors.back().role = TensorRole::kTiedCopy;
    tokens.tensors.back().stored = false;
    part.embeddings.push_back(std::move(tokens));
  } else {
    part.embeddings.push_back(
        Embedding(prefix + "embed_tokens", vocab, d.d_model, stack + " token embedding"));
  }
  const int64_t rows =
      (decoder ? d.decoder_positions : d.encoder_positions) + (f.inputs == Inputs::kBart ? 2 : 0);
  part.embeddings.push_back(Positions(f, stack, rows, d.d_model));
  if (f.inputs == Inputs::kBart) {
    part.embeddings.push_back(
        Norm(prefix + "layernorm_embedding", d.d_model, NormKind::kLayer, true));
  }
}

ModelGraph Stack(const BartDims& d, const BartLike& f, const std::string& stack) {
  ModelGraph part;
  AddInputs(d, f, stack, part);
  part.blocks.push_back(Layer(d, f, stack));
  UniformLayers(part, stack == "decoder" ? d.decoder.layers : d.encoder.layers);
  if (f.inputs == Inputs::kWhisper) {
    part.final_nodes.push_back(
        Norm("model." + stack + ".layer_norm", d.d_model, NormKind::kLayer, true));
  }
  return part;
}

void BuildBartLike(const BartLike& f, ConfigReader& config, ModelGraph& g) {
  const BartDims d = ReadDims(f, config);
  if (!config.ok()) return;
  g.family = f.family;
  g.vocab = d.decoder_vocab;
  g.hidden = d.d_model;
  g.max_positions = d.decoder_positions;
  g.base_prefix = "model.";

  ModelGraph encoder = Stack(d, f, "encoder");
  if (d.shared) {
    encoder.embeddings.insert(
        encoder.embeddings.begin(),
        Embedding("model.shared", d.vocab, d.d_model, "shared token embedding (both stacks)"));
  }
  ModelGraph decoder = Stack(d, f, "decoder");
  Node head = Head(std::string(f.head), d.decoder_vocab, d.d_model, d.tied, false, false);
  if (d.tied) {
    AddTensor(head, "weight", {d.decoder_vocab, d.d_model}, TensorRole::kTiedCopy).stored = false;
  }
  decoder.final_nodes.push_back(std::move(head));
  if (f.inputs != Inputs::kWhisper) {
    Node bias = TensorNode(NodeKind::kOpaque, "", "final_logits_bias", {1, d.decoder_vocab},
                           d.decoder_vocab, "final_logits_bias buffer, added to the logits");
    bias.tensors.back().role = TensorRole::kBuffer;
    decoder.final_nodes.push_back(std::move(bias));
  }
  const std::string kind(f.model_type);
  Join(g, std::move(encoder),
       kind + " encoder, " + std::to_string(d.encoder.layers) + " layers, d_model " +
           std::to_string(d.d_model),
       std::move(decoder),
       kind + " decoder, " + std::to_string(d.decoder.layers) + " layers with cross-attention");
  g.tied = d.tied;
  g.notes.push_back("cross-attention caches K and V of " + std::to_string(d.encoder_positions) +
                    (f.inputs == Inputs::kWhisper
                         ? " encoder positions per sequence (max_source_positions: every input "
                           "is 30 s of audio)"
                         : " encoder positions per sequence (max_position_embeddings: the "
                           "longest input; shorter inputs cache less)"));
}

}  // namespace

void RegisterBartFamily(ArchRegistry& registry) {
  for (const BartLike& f : kBartLike) {
    registry.Add(f.model_type, [&f](ConfigReader& config, ModelGraph& graph) {
      BuildBartLike(f, config, graph);
    });
  }
}

}  // namespace hubwatch::seq2seq
