// Llama 3.2 Vision (MllamaForConditionalGeneration, model_type mllama; its text model
// mllama_text_model, MllamaForCausalLM).
//
// The text decoder is Llama 3 with cross-attention layers at cross_attention_layers in place of
// self-attention ones: each attends from the text to the image tokens through q/k/v/o, per-head
// q_norm/k_norm RMSNorms and tanh gates (cross_attn_attn_gate, cross_attn_mlp_gate, one scalar
// each). Its K and V come from the vision model's output, computed once per image and cached
// for the whole sequence (KvCaching::kCross over max_num_tiles * patches-per-tile tokens, one
// image assumed); the self-attention layers cache as usual. embed_tokens holds vocab_size + 8
// rows (the image tokens); lm_head vocab_size.
//
// The composite: vision_model (arch_mllama_vision.cc), multi_modal_projector (one biased linear
// from vision_output_dim to the text width) and the text model under "language_model.".

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/vl_composite.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

constexpr int64_t kImageTokens = 8;  // MllamaTextModel: nn.Embedding(vocab_size + 8, ...)

using multimodal::DecoderDims;

Node Attention(const DecoderDims& d, bool cross) {
  if (!cross) {
    return multimodal::DecoderAttention("model.layers.{i}.self_attn", "", d, KvCaching::kSelf,
                                        false);
  }
  // A cross-attention node is the layer module itself, so that its scalar gate keeps its
  // checkpoint name beside cross_attn (MllamaCrossAttentionDecoderLayer.cross_attn_attn_gate).
  // cross_tokens: set by the composite, which knows the image (0 for a text model alone).
  Node n =
      multimodal::DecoderAttention("model.layers.{i}", "cross_attn.", d, KvCaching::kCross, true);
  n.label = "gated cross-attention to the image tokens, " + n.label;
  AddTensor(n, "cross_attn.q_norm.weight", {d.head_dim});
  AddTensor(n, "cross_attn.k_norm.weight", {d.head_dim});
  AddTensor(n, "cross_attn_attn_gate", {1});
  return n;
}

BlockTemplate Layer(const DecoderDims& d, bool cross) {
  // As the attention: a cross layer's MLP node is the layer, beside cross_attn_mlp_gate.
  Node mlp = MlpNode(cross ? "model.layers.{i}" : "model.layers.{i}.mlp", d.hidden,
                     {d.intermediate, true, d.activation});
  multimodal::AddSwiGlu(mlp, cross ? "mlp." : "", d.hidden, d.intermediate);
  if (cross) AddTensor(mlp, "cross_attn_mlp_gate", {1});
  return multimodal::PreNormBlock(
      cross ? "Mllama cross-attention decoder layer" : "Mllama self-attention decoder layer",
      "model.layers.{i}.", d.hidden, Attention(d, cross), std::move(mlp));
}

void BuildMllamaText(ConfigReader& config, ModelGraph& g) {
  const DecoderDims d = multimodal::ReadDecoderDims(config, std::nullopt);
  const int64_t layers = d.layers;
  std::vector<bool> cross(static_cast<size_t>(layers), false);
  for (int64_t i : config.IntList({"cross_attention_layers"})) {
    if (i < 0 || i >= layers) {
      config.Fail("cross_attention_layers lists " + std::to_string(i) + ", not a layer");
      return;
    }
    cross[static_cast<size_t>(i)] = true;
  }
  if (!config.ok()) return;
  multimodal::DecoderShell(
      config, g, d, "Mllama text decoder: Llama 3 with gated cross-attention layers to the image",
      kImageTokens);
  g.blocks.push_back(Layer(d, false));
  g.blocks.push_back(Layer(d, true));
  for (bool c : cross) g.layers.push_back(LayerSpec{c ? 1 : 0, 0});
}

void BuildMllama(ConfigReader& config, ModelGraph& g) {
  g.family =
      "Mllama (Llama 3.2 Vision): tiled ViT with local and gated global layers, linear "
      "projector, Llama 3 decoder with gated cross-attention layers";
  const int64_t tile_tokens =
      multimodal::BuildComposite(config, g,
                                 {.vision_type = "mllama_vision_model",
                                  .text_type = "mllama_text_model",
                                  .tower_label = "Mllama ViT",
                                  .projector_module = "multi_modal_projector",
                                  .projector_bias = true});
  if (!config.ok()) return;
  // Each cross-attention layer caches K and V of one image: every tile's patches and class token.
  const nlohmann::json& vision = config.json()["vision_config"];
  ConfigReader v(vision, config.depth() + 1);
  const int64_t tiles = v.Positive({"max_num_tiles"}, 64, 4);
  multimodal::Forward(v, config, "vision_config");
  for (BlockTemplate& b : g.blocks) {
    for (Node& n : b.nodes) {
      if (n.attention.caching == KvCaching::kCross) n.attention.cross_tokens = tiles * tile_tokens;
    }
  }
}

}  // namespace

void RegisterMllama(ArchRegistry& registry) {
  registry.Add("mllama_text_model", BuildMllamaText);
  registry.Add("mllama", BuildMllama);
}

}  // namespace hubwatch
