#pragma once

// Helpers the per-architecture builders share. Internal to the estimator.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch::build {

// Adds "<module>.<name>.weight" [out, in] (and ".bias" [out]) as a Linear layer; an empty name
// adds "<module>.weight" itself.
void AddLinear(Node& node, const std::string& name, int64_t in, int64_t out, bool bias);
// GPT-2's Conv1D stores its weight transposed: [in, out].
void AddConv1D(Node& node, const std::string& name, int64_t in, int64_t out);
// Adds "<module>.<name>" with the given shape and role.
TensorSpec& AddTensor(Node& node, const std::string& name, TensorShape shape,
                      TensorRole role = TensorRole::kParameter);

Node Embedding(const std::string& module, int64_t vocab, int64_t hidden, std::string label);
Node Norm(const std::string& module, int64_t width, NormKind kind, bool bias);
// The LM head [vocab, hidden]. Tied: no parameter of its own; `stores_tied_copy` adds the copy
// that some checkpoints (falcon) store anyway.
Node Head(const std::string& module, int64_t vocab, int64_t hidden, bool tied, bool bias,
          bool stores_tied_copy);

Node AttentionNode(const std::string& module, const AttentionShape& shape);
Node MlpNode(const std::string& module, int64_t hidden, const MlpShape& shape);

// "GQA" / "MHA" / "MQA" from head counts.
AttentionKind KindFromHeads(int64_t heads, int64_t kv_heads);
// "SwiGLU" for gated silu, "GeGLU" for gated gelu*, else the activation itself.
std::string ActivationLabel(bool gated, const std::string& activation);

// head_dim from the config, else default_head_dim when given, else hidden / heads (noted).
int64_t ReadHeadDim(ConfigReader& config, int64_t hidden, int64_t heads,
                    std::optional<int64_t> default_head_dim);

// Fails the read when num_experts_per_tok exceeds the expert count: routing cannot pick more
// experts than exist (torch.topk refuses), and the active count would exceed the total.
void CheckTopK(ConfigReader& config, int64_t top_k, int64_t experts);

// Builds a node list by moving the nodes in (an initializer list would copy them).
template <class... Nodes>
std::vector<Node> NodeList(Nodes&&... nodes) {
  std::vector<Node> list;
  list.reserve(sizeof...(nodes));
  (list.push_back(std::forward<Nodes>(nodes)), ...);
  return list;
}

// Every layer uses block 0 with no sliding window.
void UniformLayers(ModelGraph& graph, int64_t layers);
// When config.json has "layer_types" (transformers >= 4.53), it decides which layers slide:
// returns true and applies it. Otherwise returns false and leaves the layers alone.
bool ApplyLayerTypes(ConfigReader& config, ModelGraph& graph, int64_t window);

// Every node's module in `g` prefixed: "model.layers.{i}" -> "language_model.model.layers.{i}"
// (a composite's checkpoint names its parts under their attribute names).
void PrefixModules(ModelGraph& g, const std::string& prefix);

// Appends `part` to `into` as a section of its own (ModelGraph::sections): its embeddings,
// layers (numbered in its tensor names as in the part), final and extra nodes and notes. The
// composite's own fields (vocab, hidden, tied, decodes ...) are left to the caller.
void AppendSection(ModelGraph& into, ModelGraph part, GraphSection section);

// torch_dtype ("bfloat16") -> safetensors dtype ("BF16"); empty if unknown or absent.
std::string SafetensorsDtype(const std::string& torch_dtype);

}  // namespace hubwatch::build
