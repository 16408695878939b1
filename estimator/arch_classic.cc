// Classic GPT-style decoders: opt, bloom, gptj, gpt_bigcode, mpt and stablelm.
//
// They share one layout (a token embedding, perhaps learned positions, blocks of attention and
// an MLP around LayerNorms, a final norm, a head) and differ in their checkpoint names and a few
// switches. So each family is one row of kFamilies: the module names its checkpoints use, and a
// reader that turns its config.json (the keys, aliases and defaults of its config class) into a
// Decoder. Assemble builds every family's graph from those two. The readers and Decoder itself
// live in arch_classic_readers.cc and classic_decoder.h.

#include "estimator/arch_registry.h"
#include "estimator/classic_decoder.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace classic {
namespace {

using namespace build;  // NOLINT: internal helpers

// The checkpoint module names of one family. "{i}" is the layer index; names under the layer
// and under the attention module are relative to them. "" means the family has no such module.
struct Names {
  const char* base_prefix;
  const char* embed;        // token embedding
  const char* positions;    // learned position table
  const char* embed_norm;   // LayerNorm on the embedding output (bloom)
  const char* project_in;   // OPT: word_embed_proj_dim -> hidden_size, when they differ
  const char* project_out;  // OPT: hidden_size -> word_embed_proj_dim, before the head
  const char* layer;        // "transformer.h.{i}"
  const char* norm1;        // before attention (after it in a post-norm block)
  const char* norm2;        // before the MLP (after it in a post-norm block); unused if parallel
  const char* attention;
  const char* qkv;  // the fused q/k/v projection; "": separate q_proj, k_proj, v_proj
  const char* out;
  const char* mlp;  // under the layer; "": the MLP's linears sit in the layer itself (OPT)
  const char* up;   // a gated MLP adds "gate_proj" beside these
  const char* down;
  const char* final_norm;
  const char* head;
};

struct ClassicFamily {
  std::string_view model_type;
  Names names;
  Decoder (*read)(ConfigReader& config);
};

const ClassicFamily kFamilies[] = {
    {"opt",
     {.base_prefix = "model.",
      .embed = "model.decoder.embed_tokens",
      .positions = "model.decoder.embed_positions",
      .embed_norm = "",
      .project_in = "model.decoder.project_in",
      .project_out = "model.decoder.project_out",
      .layer = "model.decoder.layers.{i}",
      .norm1 = "self_attn_layer_norm",
      .norm2 = "final_layer_norm",
      .attention = "self_attn",
      .qkv = "",
      .out = "out_proj",
      .mlp = "",
      .up = "fc1",
      .down = "fc2",
      .final_norm = "model.decoder.final_layer_norm",
      .head = "lm_head"},
     ReadOpt},
    {"bloom",
     {.base_prefix = "transformer.",
      .embed = "transformer.word_embeddings",
      .positions = "",
      .embed_norm = "transformer.word_embeddings_layernorm",
      .project_in = "",
      .project_out = "",
      .layer = "transformer.h.{i}",
      .norm1 = "input_layernorm",
      .norm2 = "post_attention_layernorm",
      .attention = "self_attention",
      .qkv = "query_key_value",
      .out = "dense",
      .mlp = "mlp",
      .up = "dense_h_to_4h",
      .down = "dense_4h_to_h",
      .final_norm = "transformer.ln_f",
      .head = "lm_head"},
     ReadBloom},
    {"gptj",
     {.base_prefix = "transformer.",
      .embed = "transformer.wte",
      .positions = "",
      .embed_norm = "",
      .project_in = "",
      .project_out = "",
      .layer = "transformer.h.{i}",
      .norm1 = "ln_1",
      .norm2 = "",
      .attention = "attn",
      .qkv = "",
      .out = "out_proj",
      .mlp = "mlp",
      .up = "fc_in",
      .down = "fc_out",
      .final_norm = "transformer.ln_f",
      .head = "lm_head"},
     ReadGptj},
    {"gpt_bigcode",
     {.base_prefix = "transformer.",
      .embed = "transformer.wte",
      .positions = "transformer.wpe",
      .embed_norm = "",
      .project_in = "",
      .project_out = "",
      .layer = "transformer.h.{i}",
      .norm1 = "ln_1",
      .norm2 = "ln_2",
      .attention = "attn",
      .qkv = "c_attn",
      .out = "c_proj",
      .mlp = "mlp",
      .up = "c_fc",
      .down = "c_proj",
      .final_norm = "transformer.ln_f",
      .head = "lm_head"},
     ReadGptBigcode},
    {"mpt",
     {.base_prefix = "transformer.",
      .embed = "transformer.wte",
      .positions = "transformer.wpe",
      .embed_norm = "",
      .project_in = "",
      .project_out = "",
      .layer = "transformer.blocks.{i}",
      .norm1 = "norm_1",
      .norm2 = "norm_2",
      .attention = "attn",
      .qkv = "Wqkv",
      .out = "out_proj",
      .mlp = "ffn",
      .up = "up_proj",
      .down = "down_proj",
      .final_norm = "transformer.norm_f",
      .head = "lm_head"},
     ReadMpt},
    {"stablelm",
     {.base_prefix = "model.",
      .embed = "model.embed_tokens",
      .positions = "",
      .embed_norm = "",
      .project_in = "",
      .project_out = "",
      .layer = "model.layers.{i}",
      .norm1 = "input_layernorm",
      .norm2 = "post_attention_layernorm",
      .attention = "self_attn",
      .qkv = "",
      .out = "o_proj",
      .mlp = "mlp",
      .up = "up_proj",
      .down = "down_proj",
      .final_norm = "model.norm",
      .head = "lm_head"},
     ReadStablelm},
};

void Assemble(const ClassicFamily& f, Decoder d, ModelGraph& g) {
  const Names& n = f.names;
  const std::string layer = n.layer;
  auto in_layer = [&](const char* name) { return *name ? layer + "." + name : layer; };
  const int64_t embed_width = d.embed_width ? d.embed_width : d.hidden;
  const bool projected = embed_width != d.hidden;

  g.family = d.family;
  g.vocab = d.vocab;
  g.hidden = d.hidden;
  g.base_prefix = n.base_prefix;
  g.tied = d.tied;
  g.loss_in_fp32 = d.loss_in_fp32;
  if (d.max_positions) g.max_positions = d.max_positions;

  g.embeddings.push_back(Embedding(n.embed, d.vocab, embed_width, "token embedding"));
  if (projected) {
    Node in;
    in.kind = NodeKind::kEmbedding;
    in.module = n.project_in;
    in.label = "project_in " + std::to_string(embed_width) + " -> " + std::to_string(d.hidden);
    in.output_width = d.hidden;
    AddLinear(in, "", embed_width, d.hidden, false);
    g.embeddings.push_back(std::move(in));
  }
  if (d.position_rows) {
    Node wpe = Embedding(n.positions, d.position_rows, d.hidden, "learned position embedding");
    wpe.kind = NodeKind::kPositionEmbedding;
    g.embeddings.push_back(std::move(wpe));
  }
  if (d.embed_norm) g.embeddings.push_back(Norm(n.embed_norm, d.hidden, d.norm_kind, d.norm_bias));

  AttentionShape shape;
  shape.kind = KindFromHeads(d.heads, d.kv_heads);
  shape.heads = d.heads;
  shape.kv_heads = d.kv_heads;
  shape.head_dim = shape.v_head_dim = d.head_dim;
  shape.qk_norm_width = d.qk_norm_width;
  Node attn = AttentionNode(in_layer(n.attention), shape);
  attn.label += d.attention_label;
  attn.output_width = d.hidden;
  const int64_t q_width = d.heads * d.head_dim, kv_width = d.kv_heads * d.head_dim;
  if (*n.qkv) {
    AddLinear(attn, n.qkv, d.hidden, q_width + 2 * kv_width, d.qkv_bias);
  } else {
    AddLinear(attn, "q_proj", d.hidden, q_width, d.qkv_bias);
    AddLinear(attn, "k_proj", d.hidden, kv_width, d.qkv_bias);
    AddLinear(attn, "v_proj", d.hidden, kv_width, d.qkv_bias);
  }
  AddLinear(attn, n.out, q_width, d.hidden, d.out_bias);
  for (TensorSpec& t : d.attention_extra) attn.tensors.push_back(std::move(t));

  Node mlp = MlpNode(in_layer(n.mlp), d.hidden, {d.inner, d.gated, d.activation});
  if (d.gated) AddLinear(mlp, "gate_proj", d.hidden, d.inner, d.mlp_bias);
  AddLinear(mlp, n.up, d.hidden, d.inner, d.mlp_bias);
  AddLinear(mlp, n.down, d.inner, d.hidden, d.mlp_bias);

  auto norm = [&](const char* name) {
    return Norm(in_layer(name), d.hidden, d.norm_kind, d.norm_bias);
  };
  BlockTemplate block{std::string(f.model_type) + " block", {}};
  switch (d.layout) {
    case BlockLayout::kPreNorm:
      block.nodes = NodeList(norm(n.norm1), std::move(attn), norm(n.norm2), std::move(mlp));
      break;
    case BlockLayout::kPostNorm:
      block.nodes = NodeList(std::move(attn), norm(n.norm1), std::move(mlp), norm(n.norm2));
      break;
    case BlockLayout::kParallel:
      mlp.saves_input = false;  // attention and MLP share the one norm's output
      block.nodes = NodeList(norm(n.norm1), std::move(attn), std::move(mlp));
      break;
  }
  g.blocks.push_back(std::move(block));
  UniformLayers(g, d.layers);

  if (d.final_norm) g.final_nodes.push_back(Norm(n.final_norm, d.hidden, d.norm_kind, d.norm_bias));
  if (projected) {
    Node out;
    out.kind = NodeKind::kHead;
    out.module = n.project_out;
    out.label = "project_out " + std::to_string(d.hidden) + " -> " + std::to_string(embed_width);
    out.input_width = d.hidden;
    out.output_width = embed_width;
    AddLinear(out, "", d.hidden, embed_width, false);
    g.final_nodes.push_back(std::move(out));
  }
  Node head = Head(n.head, d.vocab, embed_width, d.tied, d.head_bias, false);
  if (d.tied && d.head_bias) AddTensor(head, "bias", {d.vocab});  // a bias is never tied
  g.final_nodes.push_back(std::move(head));
}

}  // namespace
}  // namespace classic

void RegisterClassicDecoders(ArchRegistry& registry) {
  for (const classic::ClassicFamily& f : classic::kFamilies) {
    registry.Add(f.model_type, [&f](ConfigReader& config, ModelGraph& graph) {
      classic::Assemble(f, f.read(config), graph);
    });
  }
}

}  // namespace hubwatch
