#include "estimator/graph_builder.h"

#include <nlohmann/json.hpp>

namespace hubwatch::build {

TensorSpec& AddTensor(Node& node, const std::string& name, TensorShape shape, TensorRole role) {
  TensorSpec t;
  t.name = name;
  t.shape = std::move(shape);
  t.role = role;
  node.tensors.push_back(std::move(t));
  return node.tensors.back();
}

void AddLinear(Node& node, const std::string& name, int64_t in, int64_t out, bool bias) {
  const std::string prefix = name.empty() ? "" : name + ".";
  TensorSpec& w = AddTensor(node, prefix + "weight", {out, in});
  w.linear_in = in;
  w.linear_out = out;
  if (bias) AddTensor(node, prefix + "bias", {out});
}

void AddConv1D(Node& node, const std::string& name, int64_t in, int64_t out) {
  TensorSpec& w = AddTensor(node, name + ".weight", {in, out});
  w.linear_in = in;
  w.linear_out = out;
  AddTensor(node, name + ".bias", {out});
}

Node Embedding(const std::string& module, int64_t vocab, int64_t hidden, std::string label) {
  Node n;
  n.kind = NodeKind::kEmbedding;
  n.module = module;
  n.label = std::move(label);
  n.output_width = hidden;
  AddTensor(n, "weight", {vocab, hidden});
  return n;
}

Node Norm(const std::string& module, int64_t width, NormKind kind, bool bias) {
  Node n;
  n.kind = NodeKind::kNorm;
  n.module = module;
  n.norm = kind;
  n.output_width = width;
  switch (kind) {
    case NormKind::kRms:
      n.label = "RMSNorm";
      break;
    case NormKind::kLayer:
      n.label = bias ? "LayerNorm" : "LayerNorm (no bias)";
      break;
    case NormKind::kLayerNoAffine:
      n.label = "LayerNorm (non-parametric)";
      break;
  }
  if (kind != NormKind::kLayerNoAffine) {
    AddTensor(n, "weight", {width});
    if (bias) AddTensor(n, "bias", {width});
  }
  return n;
}

Node Head(const std::string& module, int64_t vocab, int64_t hidden, bool tied, bool bias,
          bool stores_tied_copy) {
  Node n;
  n.kind = NodeKind::kHead;
  n.module = module;
  n.output_width = vocab;
  n.input_width = hidden;
  if (tied) {
    n.label = "LM head (tied to the embedding)";
    if (stores_tied_copy) AddTensor(n, "weight", {vocab, hidden}, TensorRole::kTiedCopy);
  } else {
    n.label = "LM head";
    AddLinear(n, "", hidden, vocab, bias);
  }
  return n;
}

AttentionKind KindFromHeads(int64_t heads, int64_t kv_heads) {
  if (kv_heads == heads) return AttentionKind::kMha;
  if (kv_heads == 1) return AttentionKind::kMqa;
  return AttentionKind::kGqa;
}

Node AttentionNode(const std::string& module, const AttentionShape& shape) {
  Node n;
  n.kind = NodeKind::kAttention;
  n.module = module;
  n.attention = shape;
  std::string label;
  if (shape.kind == AttentionKind::kMla) {
    label = "MLA attention: " + std::to_string(shape.heads) + " heads, q " +
            (shape.q_lora_rank ? "through a rank-" + std::to_string(shape.q_lora_rank) + " latent"
                               : std::string("projected directly")) +
            ", KV latent " + std::to_string(shape.kv_lora_rank) + " + rope " +
            std::to_string(shape.rope_head_dim) + ", head_dim " + std::to_string(shape.head_dim) +
            "/" + std::to_string(shape.v_head_dim);
  } else {
    const char* kind = shape.kind == AttentionKind::kMha   ? "MHA"
                       : shape.kind == AttentionKind::kMqa ? "MQA"
                                                           : "GQA";
    label = std::string(kind) + " attention: " + std::to_string(shape.heads) + " query / " +
            std::to_string(shape.kv_heads) + " KV heads, head_dim " +
            std::to_string(shape.head_dim);
  }
  if (shape.qk_norm_width) label += ", q/k norm";
  if (shape.logit_softcap) label += ", logit soft-capping";
  n.label = std::move(label);
  return n;
}

std::string ActivationLabel(bool gated, const std::string& activation) {
  if (!gated) return activation;
  if (activation == "silu" || activation == "swish") return "SwiGLU";
  if (activation.rfind("gelu", 0) == 0) return "GeGLU";
  if (activation == "relu") return "ReGLU";
  return activation + "-GLU";
}

Node MlpNode(const std::string& module, int64_t hidden, const MlpShape& shape) {
  Node n;
  n.kind = NodeKind::kMlp;
  n.module = module;
  n.mlp = shape;
  n.output_width = hidden;
  n.label =
      shape.gated
          ? "gated MLP, " + ActivationLabel(true, shape.activation) + " (" + shape.activation +
                "), intermediate " + std::to_string(shape.intermediate)
          : "MLP (" + shape.activation + "), intermediate " + std::to_string(shape.intermediate);
  return n;
}

void CheckTopK(ConfigReader& config, int64_t top_k, int64_t experts) {
  if (top_k > experts) {
    config.Fail("num_experts_per_tok (" + std::to_string(top_k) +
                ") exceeds the number of experts (" + std::to_string(experts) + ")");
  }
}

int64_t ReadHeadDim(ConfigReader& config, int64_t hidden, int64_t heads,
                    std::optional<int64_t> default_head_dim) {
  if (std::optional<int64_t> d = config.OptionalPositive({"head_dim"}, kMaxWidth)) return *d;
  if (default_head_dim) {
    config.Note("head_dim absent: the architecture's default " + std::to_string(*default_head_dim));
    return *default_head_dim;
  }
  if (hidden % heads != 0) {
    config.Fail("hidden_size " + std::to_string(hidden) + " is not divisible by " +
                "num_attention_heads " + std::to_string(heads) + " and head_dim is not given");
    return 1;
  }
  return hidden / heads;
}

void UniformLayers(ModelGraph& graph, int64_t layers) {
  graph.layers.assign(static_cast<size_t>(layers), LayerSpec{0, 0});
}

bool ApplyLayerTypes(ConfigReader& config, ModelGraph& graph, int64_t window) {
  const nlohmann::json* types = config.Find({"layer_types"});
  if (!types) return false;
  if (!types->is_array() || types->size() != graph.layers.size()) {
    config.Fail("layer_types must list one attention type per layer (" +
                std::to_string(graph.layers.size()) + ")");
    return true;
  }
  for (size_t i = 0; i < graph.layers.size(); ++i) {
    const nlohmann::json& t = (*types)[i];
    if (!t.is_string()) {
      config.Fail("layer_types[" + std::to_string(i) + "] must be a string");
      return true;
    }
    const bool sliding = t.get<std::string>().find("sliding") != std::string::npos;
    graph.layers[i].window = sliding ? window : 0;
  }
  return true;
}

std::string SafetensorsDtype(const std::string& torch_dtype) {
  if (torch_dtype == "bfloat16") return "BF16";
  if (torch_dtype == "float16" || torch_dtype == "half") return "F16";
  if (torch_dtype == "float32" || torch_dtype == "float") return "F32";
  if (torch_dtype == "float64") return "F64";
  if (torch_dtype == "float8_e4m3fn") return "F8_E4M3";
  return "";
}

void PrefixModules(ModelGraph& g, const std::string& prefix) {
  auto prefix_all = [&](std::vector<Node>& nodes) {
    for (Node& n : nodes) {
      n.module = n.module.empty() ? prefix.substr(0, prefix.size() - (prefix.ends_with('.') ? 1 : 0))
                                  : prefix + n.module;
    }
  };
  prefix_all(g.embeddings);
  for (BlockTemplate& b : g.blocks) prefix_all(b.nodes);
  prefix_all(g.final_nodes);
  prefix_all(g.extra_nodes);
}

void AppendSection(ModelGraph& into, ModelGraph part, GraphSection section) {
  const int index = static_cast<int>(into.sections.size());
  into.sections.push_back(std::move(section));
  auto mark = [index](std::vector<Node>& nodes) {
    for (Node& n : nodes) n.section = index;
  };
  mark(part.embeddings);
  mark(part.final_nodes);
  mark(part.extra_nodes);
  const int block_base = static_cast<int>(into.blocks.size());
  for (BlockTemplate& b : part.blocks) {
    mark(b.nodes);
    into.blocks.push_back(std::move(b));
  }
  for (size_t i = 0; i < part.layers.size(); ++i) {
    LayerSpec layer = part.layers[i];
    layer.block += block_base;
    if (layer.number < 0) layer.number = static_cast<int64_t>(i);
    into.layers.push_back(layer);
  }
  auto move_all = [](std::vector<Node>& from, std::vector<Node>& to) {
    for (Node& n : from) to.push_back(std::move(n));
  };
  move_all(part.embeddings, into.embeddings);
  move_all(part.final_nodes, into.final_nodes);
  move_all(part.extra_nodes, into.extra_nodes);
  for (std::string& note : part.notes) into.notes.push_back(std::move(note));
}

}  // namespace hubwatch::build
