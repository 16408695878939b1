// Falcon, in both config formats: FalconForCausalLM (model_type "falcon") and the legacy
// RWForCausalLM remote-code format (model_type "RefinedWebModel" for 7B-style multi-query
// models, "RefinedWeb" for the 40B-style new decoder architecture).

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

void BuildFalcon(ConfigReader& config, ModelGraph& g, bool legacy_new_arch_default) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"hidden_size", "n_embd"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers", "n_layer"}, kMaxLayers);
  const int64_t heads = config.Positive({"num_attention_heads", "n_head"}, kMaxHeads);
  const bool new_arch = config.Flag({"new_decoder_architecture"}, legacy_new_arch_default);
  const bool multi_query = config.Flag({"multi_query"}, true);
  const bool parallel = config.Flag({"parallel_attn"}, true);
  const bool bias = config.Flag({"bias"}, false);
  const int64_t ffn = config.Positive({"ffn_hidden_size"}, kMaxWidth, 4 * hidden);
  if (hidden % heads != 0) config.Fail("hidden_size is not divisible by the number of heads");
  const int64_t head_dim = hidden / heads;

  int64_t kv_heads = heads;
  int64_t qkv_out = 3 * hidden;
  if (new_arch) {
    kv_heads = config.Positive({"num_kv_heads", "n_head_kv"}, kMaxHeads, heads,
                               "num_kv_heads absent: one KV head per query head");
    qkv_out = (heads + 2 * kv_heads) * head_dim;
  } else if (multi_query) {
    kv_heads = 1;  // multi_query wins over any num_kv_heads, as in transformers
    qkv_out = hidden + 2 * head_dim;
  }
  const int64_t lns = new_arch ? config.Positive({"num_ln_in_parallel_attn"}, 2, 2) : 1;

  g.family = std::string("Falcon decoder: fused query_key_value") +
             (new_arch      ? ", new decoder architecture (grouped KV)"
              : multi_query ? ", multi-query"
                            : "") +
             (parallel ? ", parallel attention and MLP" : "") +
             ", LayerNorm, GELU MLP, tied head stored again in the checkpoint";
  g.vocab = vocab;
  g.hidden = hidden;
  g.base_prefix = "transformer.";
  g.tied = config.Flag({"tie_word_embeddings"}, true);
  g.embeddings.push_back(
      Embedding("transformer.word_embeddings", vocab, hidden, "token embedding"));

  AttentionShape shape;
  shape.kind = KindFromHeads(heads, kv_heads);
  shape.heads = heads;
  shape.kv_heads = kv_heads;
  shape.head_dim = shape.v_head_dim = head_dim;
  Node attn = AttentionNode("transformer.h.{i}.self_attention", shape);
  attn.output_width = hidden;
  AddLinear(attn, "query_key_value", hidden, qkv_out, bias);
  AddLinear(attn, "dense", hidden, hidden, bias);
  Node mlp = MlpNode("transformer.h.{i}.mlp", hidden, {ffn, false, "gelu"});
  AddLinear(mlp, "dense_h_to_4h", hidden, ffn, bias);
  AddLinear(mlp, "dense_4h_to_h", ffn, hidden, bias);

  auto norm = [&](const char* name) {
    return Norm(std::string("transformer.h.{i}.") + name, hidden, NormKind::kLayer, true);
  };
  BlockTemplate block{"falcon block", {}};
  if (new_arch && lns == 2) {
    Node ln_mlp = norm("ln_mlp");
    ln_mlp.saves_input = false;  // both norms read the block input
    block.nodes = NodeList(norm("ln_attn"), std::move(attn), std::move(ln_mlp), std::move(mlp));
  } else if (parallel) {
    mlp.saves_input = false;  // attention and MLP share the one norm's output
    block.nodes = NodeList(norm("input_layernorm"), std::move(attn), std::move(mlp));
  } else {
    block.nodes = NodeList(norm("input_layernorm"), std::move(attn),
                           norm("post_attention_layernorm"), std::move(mlp));
  }
  g.blocks.push_back(std::move(block));
  UniformLayers(g, layers);
  g.final_nodes.push_back(Norm("transformer.ln_f", hidden, NormKind::kLayer, true));
  g.final_nodes.push_back(Head("lm_head", vocab, hidden, g.tied, false, /*stores_tied_copy=*/true));
}

}  // namespace

void RegisterFalcon(ArchRegistry& registry) {
  registry.Add("falcon", [](ConfigReader& c, ModelGraph& g) { BuildFalcon(c, g, false); });
  registry.Add("RefinedWebModel", [](ConfigReader& c, ModelGraph& g) { BuildFalcon(c, g, false); });
  registry.Add("RefinedWeb", [](ConfigReader& c, ModelGraph& g) { BuildFalcon(c, g, true); });
}

}  // namespace hubwatch
