// Decoders with fused or GPT-style projections: gpt2 (Conv1D, learned positions, causal-mask
// buffers), gpt_neox (fused query_key_value, parallel residual), phi (parallel block, one
// LayerNorm, biased head) in its current and its phi-msft form, and phi3 (fused qkv_proj and
// gate_up_proj).

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

Node StandardAttention(const std::string& module, int64_t hidden, int64_t heads, int64_t kv_heads,
                       int64_t head_dim) {
  AttentionShape shape;
  shape.kind = KindFromHeads(heads, kv_heads);
  shape.heads = heads;
  shape.kv_heads = kv_heads;
  shape.head_dim = shape.v_head_dim = head_dim;
  Node n = AttentionNode(module, shape);
  n.output_width = hidden;
  return n;
}

void BuildGpt2(ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"n_embd", "hidden_size"}, kMaxWidth);
  const int64_t layers = config.Positive({"n_layer", "num_hidden_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"n_head", "num_attention_heads"}, kMaxHeads);
  const int64_t positions =
      config.Positive({"n_positions", "max_position_embeddings"}, kMaxPositions);
  const int64_t inner =
      config.Positive({"n_inner"}, kMaxWidth, 4 * hidden, "n_inner absent: 4 * n_embd");
  const std::string act = config.String({"activation_function"}, "gelu_new");
  if (hidden % heads != 0) config.Fail("n_embd is not divisible by n_head");
  g.family = "GPT-2 decoder: learned positions, Conv1D projections, LayerNorm, GELU MLP";
  g.vocab = vocab;
  g.hidden = hidden;
  g.max_positions = positions;
  g.base_prefix = "transformer.";
  g.tied = config.Flag({"tie_word_embeddings"}, true);

  g.embeddings.push_back(Embedding("transformer.wte", vocab, hidden, "token embedding"));
  Node wpe = Embedding("transformer.wpe", positions, hidden, "learned position embedding");
  wpe.kind = NodeKind::kPositionEmbedding;
  g.embeddings.push_back(std::move(wpe));

  Node attn = StandardAttention("transformer.h.{i}.attn", hidden, heads, heads, hidden / heads);
  AddConv1D(attn, "c_attn", hidden, 3 * hidden);
  AddConv1D(attn, "c_proj", hidden, hidden);
  // The causal mask, a persistent buffer in the published checkpoint: [1, 1, n_pos, n_pos].
  AddTensor(attn, "bias", {1, 1, positions, positions}, TensorRole::kBuffer);
  TensorSpec& masked_bias = AddTensor(attn, "masked_bias", {}, TensorRole::kBuffer);
  masked_bias.stored = false;  // only some old conversions have it

  Node mlp = MlpNode("transformer.h.{i}.mlp", hidden, {inner, false, act});
  AddConv1D(mlp, "c_fc", hidden, inner);
  AddConv1D(mlp, "c_proj", inner, hidden);

  g.blocks.push_back(
      {"gpt2 block",
       NodeList(Norm("transformer.h.{i}.ln_1", hidden, NormKind::kLayer, true), std::move(attn),
                Norm("transformer.h.{i}.ln_2", hidden, NormKind::kLayer, true), std::move(mlp))});
  UniformLayers(g, layers);
  g.final_nodes.push_back(Norm("transformer.ln_f", hidden, NormKind::kLayer, true));
  g.final_nodes.push_back(Head("lm_head", vocab, hidden, g.tied, false, false));
}

void BuildGptNeox(ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"hidden_size"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  const int64_t inter = config.Positive({"intermediate_size"}, kMaxWidth);
  const int64_t positions = config.Positive({"max_position_embeddings"}, kMaxPositions, 2048,
                                            "max_position_embeddings absent: 2048");
  const bool bias = config.Flag({"attention_bias"}, true);
  const bool parallel = config.Flag({"use_parallel_residual"}, true);
  const std::string act = config.String({"hidden_act"}, "gelu");
  if (hidden % heads != 0) config.Fail("hidden_size is not divisible by num_attention_heads");
  const int64_t head_dim = hidden / heads;
  const nlohmann::json* pct = config.Find({"rotary_pct", "partial_rotary_factor"});
  const double rotary_pct = pct && pct->is_number() ? pct->get<double>() : 0.25;
  const int64_t rotary_dims = static_cast<int64_t>(static_cast<double>(head_dim) * rotary_pct);

  g.family = std::string("GPT-NeoX decoder: fused query_key_value, LayerNorm, GELU MLP") +
             (parallel ? ", parallel residual" : "");
  g.vocab = vocab;
  g.hidden = hidden;
  g.max_positions = positions;
  g.base_prefix = "gpt_neox.";
  g.tied = config.Flag({"tie_word_embeddings"}, false);
  g.embeddings.push_back(Embedding("gpt_neox.embed_in", vocab, hidden, "token embedding"));

  Node attn = StandardAttention("gpt_neox.layers.{i}.attention", hidden, heads, heads, head_dim);
  AddLinear(attn, "query_key_value", hidden, 3 * hidden, bias);
  AddLinear(attn, "dense", hidden, hidden, bias);
  // Buffers older GPT-NeoX checkpoints (Pythia) store; transformers recreates them.
  for (auto [name, shape, dtype] : {std::tuple<const char*, TensorShape, const char*>{
                                        "bias", {1, 1, positions, positions}, "BOOL"},
                                    {"masked_bias", {}, "F32"},
                                    {"rotary_emb.inv_freq", {rotary_dims / 2}, "F32"}}) {
    TensorSpec& t = AddTensor(attn, name, shape, TensorRole::kBuffer);
    t.stored = false;
    t.dtype = dtype;
  }
  Node mlp = MlpNode("gpt_neox.layers.{i}.mlp", hidden, {inter, false, act});
  AddLinear(mlp, "dense_h_to_4h", hidden, inter, true);
  AddLinear(mlp, "dense_4h_to_h", inter, hidden, true);
  Node mlp_norm =
      Norm("gpt_neox.layers.{i}.post_attention_layernorm", hidden, NormKind::kLayer, true);
  // Parallel residual: both norms read the block input, which is saved once.
  mlp_norm.saves_input = !parallel;
  g.blocks.push_back(
      {"gpt_neox block",
       NodeList(Norm("gpt_neox.layers.{i}.input_layernorm", hidden, NormKind::kLayer, true),
                std::move(attn), std::move(mlp_norm), std::move(mlp))});
  UniformLayers(g, layers);
  g.final_nodes.push_back(Norm("gpt_neox.final_layer_norm", hidden, NormKind::kLayer, true));
  g.final_nodes.push_back(Head("embed_out", vocab, hidden, g.tied, false, false));
}

void BuildPhi(ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"hidden_size"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  const int64_t kv_heads =
      config.Positive({"num_key_value_heads"}, kMaxHeads, heads, "num_key_value_heads absent: MHA");
  const int64_t inter = config.Positive({"intermediate_size"}, kMaxWidth);
  const std::string act = config.String({"hidden_act"}, "gelu_new");
  const bool qk_layernorm = config.Flag({"qk_layernorm"}, false);
  if (hidden % heads != 0) config.Fail("hidden_size is not divisible by num_attention_heads");
  const int64_t head_dim = hidden / heads;
  g.family = "Phi decoder: parallel attention and MLP after one LayerNorm, biased linears and head";
  g.vocab = vocab;
  g.hidden = hidden;
  g.base_prefix = "model.";
  g.tied = config.Flag({"tie_word_embeddings"}, false);
  g.embeddings.push_back(Embedding("model.embed_tokens", vocab, hidden, "token embedding"));

  Node attn = StandardAttention("model.layers.{i}.self_attn", hidden, heads, kv_heads, head_dim);
  AddLinear(attn, "q_proj", hidden, heads * head_dim, true);
  AddLinear(attn, "k_proj", hidden, kv_heads * head_dim, true);
  AddLinear(attn, "v_proj", hidden, kv_heads * head_dim, true);
  AddLinear(attn, "dense", heads * head_dim, hidden, true);
  if (qk_layernorm) {
    attn.attention.qk_norm_width = (heads + kv_heads) * head_dim;
    for (const char* name : {"q_layernorm", "k_layernorm"}) {
      AddTensor(attn, std::string(name) + ".weight", {head_dim});
      AddTensor(attn, std::string(name) + ".bias", {head_dim});
    }
    attn.label += ", q/k LayerNorm";
  }
  Node mlp = MlpNode("model.layers.{i}.mlp", hidden, {inter, false, act});
  AddLinear(mlp, "fc1", hidden, inter, true);
  AddLinear(mlp, "fc2", inter, hidden, true);
  mlp.saves_input = false;  // shares the LayerNorm output with attention
  g.blocks.push_back({"phi block", NodeList(Norm("model.layers.{i}.input_layernorm", hidden,
                                                 NormKind::kLayer, true),
                                            std::move(attn), std::move(mlp))});
  UniformLayers(g, layers);
  g.final_nodes.push_back(Norm("model.final_layernorm", hidden, NormKind::kLayer, true));
  g.final_nodes.push_back(Head("lm_head", vocab, hidden, g.tied, true, false));
}

// microsoft/phi-1_5 and phi-2 before 2024: the remote-code PhiForCausalLM of model_type
// "phi-msft". The same model as "phi" with its own names: Embedding wte, a ParallelBlock of one
// LayerNorm "ln", a fused biased "mixer.Wqkv" and "mixer.out_proj", "mlp.fc1/fc2", and a
// CausalLMHead of its own LayerNorm and biased Linear. Rotary buffers are not persistent.
void BuildPhiMsft(ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"n_embd"}, kMaxWidth);
  const int64_t layers = config.Positive({"n_layer"}, kMaxLayers);
  const int64_t heads = config.Positive({"n_head"}, kMaxHeads);
  const int64_t kv_heads =
      config.Positive({"n_head_kv"}, kMaxHeads, heads, "n_head_kv absent or null: MHA");
  const int64_t inner =
      config.Positive({"n_inner"}, kMaxWidth, 4 * hidden, "n_inner absent or null: 4 * n_embd");
  const std::string act = config.String({"activation_function"}, "gelu_new");
  if (hidden % heads != 0) config.Fail("n_embd is not divisible by n_head");
  const int64_t head_dim = hidden / heads;
  g.family =
      "Phi decoder (phi-msft remote code): parallel attention and MLP after one LayerNorm, fused "
      "biased Wqkv, biased head after its own LayerNorm";
  g.vocab = vocab;
  g.hidden = hidden;
  g.max_positions =
      config.Positive({"n_positions"}, kMaxPositions, 2048, "n_positions absent: 2048");
  g.base_prefix = "transformer.";
  g.tied = config.Flag({"tie_word_embeddings"}, false);
  g.embeddings.push_back(Embedding("transformer.embd.wte", vocab, hidden, "token embedding"));

  Node attn = StandardAttention("transformer.h.{i}.mixer", hidden, heads, kv_heads, head_dim);
  AddLinear(attn, "Wqkv", hidden, (heads + 2 * kv_heads) * head_dim, true);
  AddLinear(attn, "out_proj", hidden, hidden, true);
  Node mlp = MlpNode("transformer.h.{i}.mlp", hidden, {inner, false, act});
  AddLinear(mlp, "fc1", hidden, inner, true);
  AddLinear(mlp, "fc2", inner, hidden, true);
  mlp.saves_input = false;  // shares the LayerNorm output with attention
  g.blocks.push_back({"phi-msft parallel block",
                      NodeList(Norm("transformer.h.{i}.ln", hidden, NormKind::kLayer, true),
                               std::move(attn), std::move(mlp))});
  UniformLayers(g, layers);
  g.final_nodes.push_back(Norm("lm_head.ln", hidden, NormKind::kLayer, true));
  g.final_nodes.push_back(Head("lm_head.linear", vocab, hidden, g.tied, true, false));
}

void BuildPhi3(ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"hidden_size"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  const int64_t heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  const int64_t kv_heads =
      config.Positive({"num_key_value_heads"}, kMaxHeads, heads, "num_key_value_heads absent: MHA");
  const int64_t inter = config.Positive({"intermediate_size"}, kMaxWidth);
  const int64_t head_dim = ReadHeadDim(config, hidden, heads, std::nullopt);
  const std::string act = config.String({"hidden_act"}, "silu");
  g.family = "Phi-3 decoder: fused qkv_proj and gate_up_proj, RMSNorm, SwiGLU MLP";
  g.vocab = vocab;
  g.hidden = hidden;
  g.base_prefix = "model.";
  g.tied = config.Flag({"tie_word_embeddings"}, false);
  g.embeddings.push_back(Embedding("model.embed_tokens", vocab, hidden, "token embedding"));

  Node attn = StandardAttention("model.layers.{i}.self_attn", hidden, heads, kv_heads, head_dim);
  AddLinear(attn, "qkv_proj", hidden, (heads + 2 * kv_heads) * head_dim, false);
  AddLinear(attn, "o_proj", heads * head_dim, hidden, false);
  Node mlp = MlpNode("model.layers.{i}.mlp", hidden, {inter, true, act});
  AddLinear(mlp, "gate_up_proj", hidden, 2 * inter, false);
  AddLinear(mlp, "down_proj", inter, hidden, false);
  g.blocks.push_back(
      {"phi3 block",
       NodeList(Norm("model.layers.{i}.input_layernorm", hidden, NormKind::kRms, false),
                std::move(attn),
                Norm("model.layers.{i}.post_attention_layernorm", hidden, NormKind::kRms, false),
                std::move(mlp))});
  UniformLayers(g, layers);
  if (std::optional<int64_t> w = config.OptionalPositive({"sliding_window"}, kMaxPositions)) {
    for (LayerSpec& layer : g.layers) layer.window = *w;
  }
  g.final_nodes.push_back(Norm("model.norm", hidden, NormKind::kRms, false));
  g.final_nodes.push_back(Head("lm_head", vocab, hidden, g.tied, false, false));
}

}  // namespace

void RegisterGptFamily(ArchRegistry& registry) {
  registry.Add("gpt2", BuildGpt2);
  registry.Add("gpt_neox", BuildGptNeox);
  registry.Add("phi", BuildPhi);
  registry.Add("phi-msft", BuildPhiMsft);
  registry.Add("phi3", BuildPhi3);
}

}  // namespace hubwatch
