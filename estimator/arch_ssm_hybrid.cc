// Hybrids of state-space (or short-convolution) layers with softmax attention: jamba
// (JambaForCausalLM: Mamba-1 + attention, MoE every other layer), bamba (BambaForCausalLM:
// Mamba-2 + attention) and lfm2 (Lfm2ForCausalLM: gated short convolutions + attention). Their
// attention layers cache K and V as usual; their mixer layers keep a fixed state per sequence.
// granitemoehybrid (GraniteMoeHybridForCausalLM: Mamba-2 + attention, Granite-MoE experts and a
// shared MLP) and falcon_h1 (FalconH1ForCausalLM: Mamba-2 and attention in parallel) are
// modelled from their transformers layouts; no released config of theirs is among the
// fixtures, so their tests check structure only.

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/llama_moe.h"
#include "estimator/ssm_parts.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

constexpr const char* kLayer = "model.layers.{i}.";

std::string At(const char* name) { return std::string(kLayer) + name; }

// The block templates of a hybrid, one per (mixer or attention) x (its MLP kind) seen, built
// when a layer first needs one.
class HybridBlocks {
 public:
  explicit HybridBlocks(ModelGraph& g) : g_(g) {}
  template <class Make>
  void Use(int64_t layer, int kind, Make&& make) {
    int& block = index_.at(static_cast<size_t>(kind));
    if (block < 0) {
      block = static_cast<int>(g_.blocks.size());
      g_.blocks.push_back(make());
    }
    g_.layers[static_cast<size_t>(layer)].block = block;
  }
  // Every layer, its block made by make(is_attention) when first needed.
  template <class Make>
  void ForEachLayer(const std::vector<bool>& attention, Make&& make) {
    for (size_t i = 0; i < attention.size(); ++i) {
      Use(static_cast<int64_t>(i), attention[i], [&] { return make(attention[i]); });
    }
  }

 private:
  ModelGraph& g_;
  std::array<int, 4> index_ = {-1, -1, -1, -1};
};

// A pre-norm hybrid block: the norm `norm_in`, the mixer (attention or not), the norm
// `norm_ff`, then the feed-forward nodes.
BlockTemplate NormedBlock(std::string label, int64_t hidden, const char* norm_in, Node mixer,
                          const char* norm_ff, std::vector<Node> ffn) {
  BlockTemplate b;
  b.label = std::move(label);
  b.nodes = NodeList(Norm(At(norm_in), hidden, NormKind::kRms, false), std::move(mixer),
                     Norm(At(norm_ff), hidden, NormKind::kRms, false));
  for (Node& n : ffn) b.nodes.push_back(std::move(n));
  return b;
}

// The final RMSNorm under `name`, then the LM head (tied or not).
void FinalNodes(ModelGraph& g, const char* name) {
  g.final_nodes.push_back(Norm(name, g.hidden, NormKind::kRms, false));
  g.final_nodes.push_back(Head("lm_head", g.vocab, g.hidden, g.tied, false, false));
}

// Reads vocab, hidden and layers and sets the graph's common fields; the embedding is
// model.embed_tokens.
struct Common {
  int64_t vocab, hidden, layers;
};
Common ReadCommon(ConfigReader& config, ModelGraph& g, std::string_view family, bool tie_default) {
  Common c;
  c.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  c.hidden = config.Positive({"hidden_size"}, kMaxWidth);
  c.layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  g.family = family;
  g.vocab = c.vocab;
  g.hidden = c.hidden;
  g.base_prefix = "model.";
  g.tied = config.Flag({"tie_word_embeddings", "tie_embedding"}, tie_default,
                       tie_default ? "tie_word_embeddings absent: tied (the architecture's default)"
                                   : "tie_word_embeddings absent: untied (the default)");
  g.embeddings.push_back(Embedding("model.embed_tokens", c.vocab, c.hidden, "token embedding"));
  UniformLayers(g, c.layers);
  return c;
}

// JambaSparseMoeBlock: feed_forward.router, experts.{e}.gate_proj/up_proj/down_proj.
Node JambaMoe(ConfigReader& config, int64_t hidden, int64_t intermediate,
              const std::string& activation, int64_t experts) {
  MoeShape shape{experts, 0, intermediate, 0, true, activation};
  shape.top_k = config.Positive({"num_experts_per_tok"}, kMaxExperts, 2,
                                "num_experts_per_tok absent: Jamba's default 2");
  CheckTopK(config, shape.top_k, experts);
  Node n;
  n.kind = NodeKind::kMoe;
  n.module = At("feed_forward");
  n.output_width = hidden;
  n.moe = shape;
  n.label = "MoE: " + std::to_string(experts) + " experts, top-" + std::to_string(shape.top_k) +
            ", " + ActivationLabel(true, activation) + " " + std::to_string(intermediate) + " each";
  AddLinear(n, "router", hidden, experts, false);
  for (const char* name : {"gate_proj", "up_proj", "down_proj"}) {
    const bool down = name[0] == 'd';
    AddLinear(n, std::string("experts.{e}.") + name, down ? intermediate : hidden,
              down ? hidden : intermediate, false);
    n.tensors.back().copies = experts;
    n.tensors.back().routed = true;
  }
  return n;
}

void BuildJamba(ConfigReader& config, ModelGraph& g) {
  const Common c = ReadCommon(config, g,
                              "Jamba: Mamba layers with attention every "
                              "attn_layer_period-th layer, MoE every other",
                              false);
  const int64_t intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  const std::string act = config.String({"hidden_act"}, "silu");
  const int64_t experts =
      config.Positive({"num_experts"}, kMaxExperts, 16, "num_experts absent: Jamba's default 16");
  const int64_t attn_period = config.Positive({"attn_layer_period"}, kMaxLayers, 8);
  const int64_t attn_offset = config.NonNegative({"attn_layer_offset"}, kMaxLayers, 4);
  const int64_t moe_period = config.Positive({"expert_layer_period"}, kMaxLayers, 2);
  const int64_t moe_offset = config.NonNegative({"expert_layer_offset"}, kMaxLayers, 1);
  const ssm::MambaDims mamba = ssm::ReadMamba1(config, c.hidden, ssm::MambaKeys::kHybrid);
  const ssm::AttentionDims attn = ssm::ReadAttention(config, c.hidden);
  if (!config.ok()) return;
  HybridBlocks blocks(g);
  for (int64_t i = 0; i < c.layers; ++i) {
    const bool attention = i % attn_period == attn_offset;
    const bool moe = experts > 1 && i % moe_period == moe_offset;
    blocks.Use(i, attention * 2 + moe, [&] {
      Node mixer =
          attention ? ssm::HybridAttention(At("self_attn"), attn, "o_proj", false, nullptr, nullptr)
                    : ssm::Mamba1Mixer(At("mamba"), mamba, true);
      Node ffn = moe ? JambaMoe(config, c.hidden, intermediate, act, experts)
                     : ssm::GatedMlp(At("feed_forward"), c.hidden, intermediate, act, "gate_proj",
                                     "up_proj", "down_proj");
      return NormedBlock(std::string(attention ? "Jamba attention" : "Jamba Mamba") +
                             (moe ? " + MoE block" : " block"),
                         c.hidden, "input_layernorm", std::move(mixer), "pre_ff_layernorm",
                         NodeList(std::move(ffn)));
    });
  }
  FinalNodes(g, "model.final_layernorm");
}

// The indices of a hybrid's attention layers, from a list key, each checked against `layers`.
std::vector<bool> AttentionLayers(ConfigReader& config, Keys key, int64_t layers) {
  std::vector<bool> attention(static_cast<size_t>(layers), false);
  for (int64_t i : config.IntList(key)) {
    if (i < 0 || i >= layers) {
      config.Fail("attention layer index " + std::to_string(i) + " is not a layer (0.." +
                  std::to_string(layers - 1) + ")");
      break;
    }
    attention[static_cast<size_t>(i)] = true;
  }
  return attention;
}

// layer_types (transformers >= 4.54): "full_attention" marks an attention layer.
bool LayerTypes(ConfigReader& config, std::vector<bool>& attention) {
  const nlohmann::json* types = config.Find({"layer_types"});
  if (!types) return false;
  if (!types->is_array() || types->size() != attention.size()) {
    config.Fail("layer_types must list one type per layer (" + std::to_string(attention.size()) +
                ")");
    return true;
  }
  for (size_t i = 0; i < attention.size(); ++i) {
    attention[i] = (*types)[i].is_string() &&
                   (*types)[i].get<std::string>().find("attention") != std::string::npos;
  }
  return true;
}

void BuildBamba(ConfigReader& config, ModelGraph& g) {
  const Common c =
      ReadCommon(config, g, "Bamba: Mamba-2 layers with a few attention layers", false);
  const int64_t intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  const std::string act = config.String({"hidden_act"}, "silu");
  const ssm::MambaDims mamba = ssm::ReadMamba2(config, c.hidden, ssm::MambaKeys::kHybrid);
  const ssm::AttentionDims attn = ssm::ReadAttention(config, c.hidden);
  std::vector<bool> attention = AttentionLayers(config, {"attn_layer_indices"}, c.layers);
  LayerTypes(config, attention);
  if (!config.ok()) return;
  HybridBlocks(g).ForEachLayer(attention, [&](bool is_attention) {
    return NormedBlock(
        is_attention ? "Bamba attention block" : "Bamba Mamba-2 block", c.hidden, "input_layernorm",
        is_attention
            ? ssm::HybridAttention(At("self_attn"), attn, "o_proj", false, nullptr, nullptr)
            : ssm::Mamba2Mixer(At("mamba"), mamba),
        "pre_ff_layernorm",
        NodeList(ssm::GatedMlp(At("feed_forward"), c.hidden, intermediate, act, "gate_proj",
                               "up_proj", "down_proj")));
  });
  FinalNodes(g, "model.final_layernorm");
}

// Lfm2MLP's width: intermediate_size (block_ff_dim in the first configs), with
// block_auto_adjust_ff_dim taken 2/3, times block_ffn_dim_multiplier, rounded up to
// block_multiple_of, as Lfm2MLP.__init__ does.
int64_t Lfm2FfnWidth(ConfigReader& config) {
  int64_t ff = config.Positive({"intermediate_size", "block_ff_dim"}, kMaxWidth);
  if (!config.Flag({"block_auto_adjust_ff_dim"}, false)) return ff;
  ff = 2 * ff / 3;
  if (const nlohmann::json* m = config.Find({"block_ffn_dim_multiplier"}); m && m->is_number()) {
    const double scaled = m->get<double>() * static_cast<double>(ff);
    if (!(scaled >= 1 && scaled <= static_cast<double>(kMaxWidth))) {
      config.Fail("block_ffn_dim_multiplier gives an MLP width out of range");
      return 1;
    }
    ff = static_cast<int64_t>(scaled);
  }
  const int64_t multiple = config.Positive({"block_multiple_of"}, kMaxWidth, 256);
  return multiple * ((ff + multiple - 1) / multiple);
}

void BuildLfm2(ConfigReader& config, ModelGraph& g) {
  const Common c =
      ReadCommon(config, g, "LFM2: gated short convolutions with a few GQA layers", true);
  const int64_t ff = Lfm2FfnWidth(config);
  const int64_t kernel = config.Positive({"conv_L_cache"}, 1024, 3, "conv_L_cache absent: 3");
  const bool conv_bias = config.Flag({"conv_bias"}, false);
  const ssm::AttentionDims attn = ssm::ReadAttention(config, c.hidden);
  std::vector<bool> attention = AttentionLayers(config, {"full_attn_idxs"}, c.layers);
  LayerTypes(config, attention);
  if (!config.ok()) return;
  HybridBlocks(g).ForEachLayer(attention, [&](bool is_attention) {
    return NormedBlock(
        is_attention ? "LFM2 attention block" : "LFM2 short-conv block", c.hidden, "operator_norm",
        is_attention ? ssm::HybridAttention(At("self_attn"), attn, "out_proj", false, "q_layernorm",
                                            "k_layernorm")
                     : ssm::ShortConv(At("conv"), c.hidden, kernel, conv_bias),
        "ffn_norm",
        NodeList(ssm::GatedMlp(At("feed_forward"), c.hidden, ff, "silu", "w1", "w3", "w2")));
  });
  // Lfm2Model applies embedding_norm after the last layer: the final norm, under that name.
  FinalNodes(g, "model.embedding_norm");
}

constexpr llama::LlamaFamily kGraniteMoe{.model_type = "granitemoehybrid",
                                         .moe = llama::Moe::kGraniteMoe};

// GraniteMoeHybridDecoderLayer: input_layernorm, mamba or self_attn (layer_types),
// post_attention_layernorm, block_sparse_moe (when num_local_experts > 0) and shared_mlp, both
// reading the same norm output.
void BuildGraniteMoeHybrid(ConfigReader& config, ModelGraph& g) {
  const Common c = ReadCommon(config, g,
                              "Granite-4.0-H: Mamba-2 layers with a few attention "
                              "layers, Granite-MoE experts beside a shared MLP",
                              false);
  llama::Dims d{};
  d.hidden = c.hidden;
  d.intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  d.activation = config.String({"hidden_act"}, "silu");
  const int64_t shared = config.Positive({"shared_intermediate_size"}, kMaxWidth);
  const int64_t experts = config.NonNegative({"num_local_experts"}, kMaxExperts, 0);
  const ssm::MambaDims mamba = ssm::ReadMamba2(config, c.hidden, ssm::MambaKeys::kHybrid);
  ssm::AttentionDims attn = ssm::ReadAttention(config, c.hidden);
  attn.bias = config.Flag({"attention_bias"}, false);
  std::vector<bool> attention(static_cast<size_t>(c.layers), false);
  if (!LayerTypes(config, attention)) {
    config.Fail("layer_types absent: which layers are Mamba and which attention cannot be told");
  }
  if (!config.ok()) return;
  HybridBlocks(g).ForEachLayer(attention, [&](bool is_attention) {
    std::vector<Node> ffn;
    if (experts) ffn.push_back(llama::MoeFor(kGraniteMoe, config, d));
    Node mlp = MlpNode(At("shared_mlp"), c.hidden, {shared, true, d.activation});
    AddLinear(mlp, "input_linear", c.hidden, 2 * shared, false);  // gate and up, fused
    AddLinear(mlp, "output_linear", shared, c.hidden, false);
    mlp.saves_input = experts == 0;
    ffn.push_back(std::move(mlp));
    return NormedBlock(
        is_attention ? "Granite-4.0-H attention block" : "Granite-4.0-H Mamba-2 block", c.hidden,
        "input_layernorm",
        is_attention
            ? ssm::HybridAttention(At("self_attn"), attn, "o_proj", false, nullptr, nullptr)
            : ssm::Mamba2Mixer(At("mamba"), mamba),
        "post_attention_layernorm", std::move(ffn));
  });
  FinalNodes(g, "model.norm");
}

// FalconH1DecoderLayer: a Mamba-2 mixer (FalconH1Mixer: width mamba_d_ssm, out_proj biased by
// projectors_bias, the gated norm only with mamba_rms_norm) and Llama attention side by side on
// the same norm output in every layer, then pre_ff_layernorm and a Llama MLP. No released
// config is among the fixtures: its tests check structure only.
void BuildFalconH1(ConfigReader& config, ModelGraph& g) {
  const Common c = ReadCommon(config, g,
                              "Falcon-H1: Mamba-2 and attention side by side in every "
                              "layer",
                              false);
  const int64_t intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  const std::string act = config.String({"hidden_act"}, "silu");
  const bool mlp_bias = config.Flag({"mlp_bias"}, false);
  ssm::MambaDims mamba = ssm::ReadMamba2(config, c.hidden, ssm::MambaKeys::kHybrid);
  mamba.out_proj_bias = config.Flag({"projectors_bias"}, false);
  mamba.gated_norm = config.Flag({"mamba_rms_norm"}, false);
  ssm::AttentionDims attn = ssm::ReadAttention(config, c.hidden);
  attn.bias = config.Flag({"attention_bias"}, false);
  if (!config.ok()) return;
  Node mixer = ssm::Mamba2Mixer(At("mamba"), mamba);
  // FalconH1Model registers its muP multipliers per projected channel as a buffer it does not save.
  AddTensor(mixer, "mup_vector",
            {1, 1, 2 * mamba.d_inner + 2 * mamba.n_groups * mamba.d_state + mamba.heads},
            TensorRole::kBuffer)
      .stored = false;
  BlockTemplate block = NormedBlock(
      "Falcon-H1 block", c.hidden, "input_layernorm", std::move(mixer), "pre_ff_layernorm",
      NodeList(ssm::GatedMlp(At("feed_forward"), c.hidden, intermediate, act, "gate_proj",
                             "up_proj", "down_proj", mlp_bias)));
  block.nodes.insert(block.nodes.begin() + 2, ssm::HybridAttention(At("self_attn"), attn, "o_proj",
                                                                   false, nullptr, nullptr));
  g.blocks.push_back(std::move(block));
  FinalNodes(g, "model.final_layernorm");
}

}  // namespace

void RegisterHybrids(ArchRegistry& registry) {
  registry.Add("jamba", BuildJamba);
  registry.Add("bamba", BuildBamba);
  registry.Add("lfm2", BuildLfm2);
  registry.Add("granitemoehybrid", BuildGraniteMoeHybrid);
  registry.Add("falcon_h1", BuildFalconH1);
}

}  // namespace hubwatch
