#include "estimator/model_graph.h"

namespace hubwatch {
namespace {

void ReplaceAll(std::string& s, std::string_view from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

struct Tally {
  std::vector<Count> by_section;
  Count total, on_disk, active, buffers, tied_copies, extra, embedding, attention, mlp, norm, head,
      other, mixer;

  void Add(const Node& node, const TensorSpec& t, Count times) {
    if (t.stored) on_disk += t.Elements() * times;
    const Count elements = t.Parameters() * times;
    switch (t.role) {
      case TensorRole::kParameter:
        break;
      case TensorRole::kBuffer:
        if (t.stored) buffers += elements;
        return;
      case TensorRole::kTiedCopy:
        if (t.stored) tied_copies += elements;
        return;
      case TensorRole::kExtraOnDisk:
        if (t.stored) extra += elements;
        return;
    }
    total += elements;
    if (static_cast<size_t>(node.section) < by_section.size()) by_section[static_cast<size_t>(node.section)] += elements;
    active += t.routed
                  ? t.ParametersPerExpert() * Count(static_cast<uint64_t>(node.moe.top_k)) * times
                  : elements;
    switch (node.kind) {
      case NodeKind::kEmbedding:
      case NodeKind::kPositionEmbedding:
        embedding += elements;
        break;
      case NodeKind::kNorm:
        norm += elements;
        break;
      case NodeKind::kAttention:
        attention += elements;
        break;
      case NodeKind::kMlp:
      case NodeKind::kMoe:
        mlp += elements;
        break;
      case NodeKind::kHead:
        head += elements;
        break;
      case NodeKind::kOpaque:
        other += elements;
        break;
      case NodeKind::kMixer:
        mixer += elements;
        break;
    }
  }

  void AddNode(const Node& node, Count times) {
    for (const TensorSpec& t : node.tensors) Add(node, t, times);
  }
};

}  // namespace

Count TensorSpec::ElementsPerCopy() const {
  Count n(1);
  for (int64_t d : shape) n *= Count(d < 0 ? 0 : static_cast<uint64_t>(d));
  return n;
}

Count TensorSpec::ParametersPerExpert() const {
  if (!experts_in_dim0 || shape.size() == 0) return ParametersPerCopy();
  Count n(static_cast<uint64_t>(packing));
  for (size_t d = 1; d < shape.size(); ++d) {
    const int64_t v = *(shape.begin() + d);
    n *= Count(v < 0 ? 0 : static_cast<uint64_t>(v));
  }
  return n;
}

Count NodeParams(const Node& node) {
  Count n;
  for (const TensorSpec& t : node.tensors) {
    if (t.role == TensorRole::kParameter) n += t.Parameters();
  }
  return n;
}

Count LayerParams(const ModelGraph& graph, size_t layer) {
  Count n;
  for (const Node& node : graph.blocks[static_cast<size_t>(graph.layers[layer].block)].nodes) {
    n += NodeParams(node);
  }
  return n;
}

Result<ParamCounts> CountParameters(const ModelGraph& graph) {
  Tally tally;
  tally.by_section.resize(graph.sections.size());
  for (const Node& node : graph.embeddings) tally.AddNode(node, 1);
  const std::vector<uint64_t> uses = BlockUses(graph);
  for (size_t b = 0; b < graph.blocks.size(); ++b) {
    for (const Node& node : graph.blocks[b].nodes) tally.AddNode(node, uses[b]);
  }
  for (const Node& node : graph.final_nodes) tally.AddNode(node, 1);
  for (const Node& node : graph.extra_nodes) tally.AddNode(node, 1);

  for (Count c : {tally.total, tally.on_disk, tally.active}) {
    if (c.overflowed()) {
      return Error::Overflow("model sizes are too large to count exactly (over 2^64 elements)");
    }
  }
  ParamCounts counts;
  counts.total = tally.total.value();
  counts.on_disk = tally.on_disk.value();
  counts.active = tally.active.value();
  counts.buffers = tally.buffers.value();
  counts.tied_copies = tally.tied_copies.value();
  counts.extra_on_disk = tally.extra.value();
  counts.embedding = tally.embedding.value();
  counts.attention = tally.attention.value();
  counts.mlp = tally.mlp.value();
  counts.norm = tally.norm.value();
  counts.head = tally.head.value();
  counts.other = tally.other.value();
  counts.mixer = tally.mixer.value();
  for (const Count& c : tally.by_section) counts.by_section.push_back(c.value());
  return counts;
}

std::vector<uint64_t> BlockUses(const ModelGraph& graph) {
  std::vector<uint64_t> uses(graph.blocks.size(), 0);
  for (const LayerSpec& layer : graph.layers) ++uses[static_cast<size_t>(layer.block)];
  return uses;
}

void ForEachTensor(const ModelGraph& graph,
                   const std::function<void(const std::string&, const TensorSpec&, int64_t)>& fn) {
  auto visit = [&](const Node& node, int64_t layer) {
    for (const TensorSpec& t : node.tensors) {
      std::string name = TensorName(node, t);
      if (layer >= 0) ReplaceAll(name, "{i}", std::to_string(layer));
      if (t.copies == 1 && name.find("{e}") == std::string::npos) {
        fn(name, t, layer);
        continue;
      }
      for (int64_t e = 0; e < t.copies; ++e) {
        std::string expert_name = name;
        ReplaceAll(expert_name, "{e}", std::to_string(e));
        fn(expert_name, t, layer);
      }
    }
  };
  for (const Node& node : graph.embeddings) visit(node, -1);
  for (size_t i = 0; i < graph.layers.size(); ++i) {
    const LayerSpec& layer = graph.layers[i];
    for (const Node& node : graph.blocks[static_cast<size_t>(layer.block)].nodes) {
      visit(node, layer.number >= 0 ? layer.number : static_cast<int64_t>(i));
    }
  }
  for (const Node& node : graph.final_nodes) visit(node, -1);
  for (const Node& node : graph.extra_nodes) visit(node, -1);
}

std::string TensorName(const Node& node, const TensorSpec& tensor) {
  if (node.module.empty()) return tensor.name;
  if (tensor.name.empty()) return node.module;
  return node.module + "." + tensor.name;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace hubwatch
