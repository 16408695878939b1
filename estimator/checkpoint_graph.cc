#include "estimator/checkpoint_graph.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "estimator/checkpoint_layout.h"
#include "estimator/checkpoint_tensors.h"
#include "estimator/config_reader.h"
#include "estimator/format.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

// Past a few, the layers stored past num_hidden_layers are one note with their count.
constexpr int64_t kMaxExtraLayerNotes = 4;

// The graph's size against checkpoint_graph.h's limits, counted as it is built.
class GraphLimits {
 public:
  // The graph's numbered layers, and its nodes outside them.
  Status Start(size_t numbered, std::initializer_list<const Node*> unnumbered) {
    if (numbered > kMaxCheckpointLayers) {
      return Error::InvalidInput("the checkpoint's tensors make " + Grouped(numbered) +
                                 " numbered layers, more than the " +
                                 Grouped(kMaxCheckpointLayers) + " read from a checkpoint");
    }
    for (const Node* n : unnumbered) {
      if (Status s = Specs(*n); !s.ok()) return s;
    }
    return Status::Ok();
  }
  // A node added to the graph.
  Status Specs(const Node& node) {
    if ((specs_ += node.tensors.size()) <= kMaxCheckpointSpecs) return Status::Ok();
    return Error::InvalidInput("the checkpoint's tensors make more than " +
                               Grouped(kMaxCheckpointSpecs) +
                               " distinct tensor templates, more than are read from a checkpoint");
  }
  // A block added to the `blocks` already there, with its node.
  Status Block(size_t blocks, const Node& node) {
    if (blocks >= kMaxCheckpointBlocks) {
      return Error::InvalidInput("the checkpoint's layers take more than " +
                                 Grouped(kMaxCheckpointBlocks) +
                                 " different sets of tensor names and shapes, more than are "
                                 "read from a checkpoint");
    }
    return Specs(node);
  }

 private:
  size_t specs_ = 0;
};

// The notes on layers stored past num_hidden_layers: one each for the first few, then a count.
class PastLayerNotes {
 public:
  void Add(const std::string& stack, int64_t number, int64_t layer_count) {
    if (++count_ > kMaxExtraLayerNotes) return;
    notes_.push_back(Clip(stack) + "." + std::to_string(number) +
                     " is stored past num_hidden_layers " + std::to_string(layer_count) +
                     ": on disk, not loaded, not counted as parameters");
  }
  void MoveTo(std::vector<std::string>& out) {
    if (count_ > kMaxExtraLayerNotes) {
      notes_.push_back("and " + std::to_string(count_ - kMaxExtraLayerNotes) +
                       " more layers stored past num_hidden_layers, on disk only");
    }
    for (std::string& n : notes_) out.push_back(std::move(n));
  }

 private:
  int64_t count_ = 0;
  std::vector<std::string> notes_;
};

using checkpoint::CheckpointLayout;
using checkpoint::Findings;
using checkpoint::IsFloat;
using checkpoint::Place;
using checkpoint::Quantization;
using checkpoint::Spec;
using checkpoint::StoredEntry;
using checkpoint::TensorGroup;

class GenericKeys {
 public:
  GenericKeys(const nlohmann::json* config, std::vector<std::string>& notes)
      : config_(config && config->is_object() ? config : nullptr), notes_(notes) {}

  std::optional<int64_t> Int(Keys keys, int64_t max) {
    if (!config_) return std::nullopt;
    ConfigReader reader(*config_);
    std::optional<int64_t> v = reader.OptionalPositive(keys, max);
    if (!reader.ok()) {
      notes_.push_back("config.json: " + reader.error().message + " (ignored)");
      return std::nullopt;
    }
    return v;
  }
  std::string String(Keys keys) {
    if (!config_) return "";
    ConfigReader reader(*config_);
    return reader.String(keys, "");
  }
  const nlohmann::json* Find(Keys keys) const {
    if (!config_) return nullptr;
    ConfigReader reader(*config_);
    return reader.Find(keys);
  }

 private:
  const nlohmann::json* config_;
  std::vector<std::string>& notes_;
};

Quantization ReadQuantization(const GenericKeys& keys) {
  Quantization q;
  const nlohmann::json* c = keys.Find({"quantization_config"});
  if (!c || !c->is_object()) return q;
  if (auto it = c->find("quant_method"); it != c->end() && it->is_string()) {
    q.method = Clip(it->get<std::string>());
  }
  if (auto it = c->find("bits"); it != c->end() && it->is_number_integer()) {
    const int64_t bits = it->get<int64_t>();
    if (bits == 2 || bits == 3 || bits == 4 || bits == 8) q.bits = bits;
  }
  return q;
}

// The attention the KV cache needs, from the generic keys: KV heads (one when multi_query),
// head_dim (hidden / heads when absent).
AttentionShape KvAttention(GenericKeys& keys, int64_t heads, int64_t hidden) {
  AttentionShape shape;
  shape.heads = heads;
  const nlohmann::json* multi_query = keys.Find({"multi_query"});
  const int64_t kv_default =
      multi_query && multi_query->is_boolean() && multi_query->get<bool>() ? 1 : heads;
  shape.kv_heads = keys.Int({"num_key_value_heads", "num_kv_heads", "n_head_kv"}, kMaxHeads)
                       .value_or(kv_default);
  shape.head_dim = shape.v_head_dim =
      keys.Int({"head_dim"}, kMaxWidth).value_or(std::max<int64_t>(1, hidden / heads));
  shape.kind = build::KindFromHeads(shape.heads, shape.kv_heads);
  return shape;
}

struct Built {
  std::vector<std::string> notes;
  Findings found;
};

using Signature = std::vector<std::tuple<std::string, std::vector<int64_t>, std::string, int64_t>>;

// One build: the checkpoint's layout in, the graph out, in the steps of Build(). Not reusable.
class Builder {
 public:
  Builder(const CheckpointLayout& layout, const nlohmann::json* config)
      : layout_(layout), keys_(config, built_.notes) {}

  Result<ModelGraph> Build() {
    ReadConfig();
    PlaceUnnumbered();
    if (Status s = BuildLayers(); !s.ok()) return s.error();
    AttachAttention();
    ChooseHead();
    Finish();
    return std::move(g_);
  }

 private:
  void ReadConfig() {
    g_.source = GraphSource::kCheckpointTensors;
    g_.family = "from the checkpoint's tensors: structure not modelled";
    g_.model_type = Clip(keys_.String({"model_type"}));
    if (const nlohmann::json* archs = keys_.Find({"architectures"});
        archs && archs->is_array() && !archs->empty() && (*archs)[0].is_string()) {
      g_.architecture = Clip((*archs)[0].get<std::string>());
    }
    quant_ = ReadQuantization(keys_);
    top_k_ = keys_.Int({"num_experts_per_tok", "moe_topk"}, kMaxExperts);
    experts_ = keys_.Int({"num_local_experts", "num_experts", "n_routed_experts"}, kMaxExperts);
    layer_count_ = keys_.Int({"num_hidden_layers", "n_layer", "num_layers"}, kMaxLayers);
  }

  // Tensors outside numbered layers: embeddings, the head, the rest (final norms, projectors).
  void PlaceUnnumbered() {
    embeddings_ = Unnumbered(Place::kEmbedding, NodeKind::kEmbedding);
    positions_ = Unnumbered(Place::kPositionEmbedding, NodeKind::kPositionEmbedding);
    head_ = Unnumbered(Place::kHead, NodeKind::kHead);
    other_ = Unnumbered(Place::kOther, NodeKind::kOpaque);
    for (std::string_view name : layout_.unnumbered(Place::kEmbedding)) {
      if (g_.vocab != 0) break;
      g_.vocab = layout_.tensor(name).shape[0];
      g_.hidden = layout_.tensor(name).shape[1];
    }
    for (std::string_view name : layout_.unnumbered(Place::kHead)) {
      head_.input_width = layout_.tensor(name).shape[1];
      head_.output_width = layout_.tensor(name).shape[0];
    }
  }

  Node Unnumbered(Place place, NodeKind kind) {
    Node node;
    node.kind = kind;
    for (std::string_view name : layout_.unnumbered(place)) {
      TensorSpec spec = Spec(std::string(name), name, layout_.tensor(name), layout_.names(), quant_,
                             built_.found);
      if (place != Place::kOther) spec.linear_in = spec.linear_out = 0;  // LoRA: blocks only
      node.tensors.push_back(std::move(spec));
    }
    return node;
  }

  // One layer's tensors as an opaque node; a folded entry of experts is one spec with copies
  // (routed when config.json gives top-k).
  Node LayerNode(const std::string& module, const std::vector<TensorGroup>& layer,
                 Signature& signature, TensorRole forced_role) {
    Node node;
    node.kind = NodeKind::kOpaque;
    node.module = module;
    for (const TensorGroup& group : layer) {
      const std::string& rest = group.rest;
      for (const StoredEntry& entry : group.entries) {
        const int64_t n = entry.copies;
        const SafetensorsTensor& stored = layout_.tensor(entry.full_name);
        TensorSpec spec =
            Spec(entry.name, entry.full_name, stored, layout_.names(), quant_, built_.found);
        spec.copies = n;
        if (forced_role != TensorRole::kParameter) spec.role = forced_role;
        // Every expert in one tensor along its first dimension (gpt-oss, granitemoe): under an
        // experts module, dim 0 the config's expert count.
        const std::vector<int64_t>& shape = stored.shape;
        const bool fused = n == 1 && experts_ && *experts_ > 1 && shape.size() >= 2 &&
                           shape[0] == *experts_ && rest.find("experts.") != std::string::npos;
        if ((n > 1 || fused) && spec.role == TensorRole::kParameter && top_k_) {
          spec.routed = true;
          spec.experts_in_dim0 = fused;
          node.moe.experts = std::max(node.moe.experts, fused ? *experts_ : n);
          node.moe.top_k = *top_k_;
        }
        experts_found_ |= n > 1 || fused;
        signature.emplace_back(entry.name, stored.shape, stored.dtype, n);
        node.tensors.push_back(std::move(spec));
      }
    }
    node.label = std::to_string(node.tensors.size()) +
                 " tensor templates as stored (structure not modelled)";
    return node;
  }

  // Layers whose tensors have the same templated names, shapes and dtypes share one block.
  Status BuildLayers() {
    GraphLimits limits;
    if (Status s =
            limits.Start(layout_.layers().size(), {&embeddings_, &positions_, &head_, &other_});
        !s.ok()) {
      return s;
    }
    std::map<Signature, int> block_of;
    PastLayerNotes past;
    for (const std::string& stack : layout_.stacks()) {
      const int64_t loaded = layout_.LoadedBelow(stack, layer_count_);
      if (loaded >= 0 && loaded == *layer_count_) kv_stack_ = stack;
      // The stack's layers, in number order (the map is by (stack, number)).
      const auto& layers = layout_.layers();
      for (auto it = layers.lower_bound({stack, INT64_MIN});
           it != layers.end() && it->first.first == stack; ++it) {
        const auto& [key, layer] = *it;
        Signature signature;
        if (loaded >= 0 && key.second >= loaded) {
          Node extra = LayerNode(stack + "." + std::to_string(key.second), layer, signature,
                                 TensorRole::kExtraOnDisk);
          if (Status s = limits.Specs(extra); !s.ok()) return s;
          g_.extra_nodes.push_back(std::move(extra));
          past.Add(stack, key.second, *layer_count_);
          continue;
        }
        Node node = LayerNode(stack + ".{i}", layer, signature, TensorRole::kParameter);
        if (node.moe.top_k > node.moe.experts && node.moe.experts > 0) {
          return Error::InvalidInput("config.json: num_experts_per_tok " +
                                     std::to_string(node.moe.top_k) + " exceeds the " +
                                     std::to_string(node.moe.experts) +
                                     " experts the checkpoint stores");
        }
        auto [block, fresh] = block_of.try_emplace(signature, static_cast<int>(g_.blocks.size()));
        if (fresh) {
          if (Status s = limits.Block(g_.blocks.size(), node); !s.ok()) return s;
          g_.blocks.push_back(
              {stack + " layer (tensors as stored)", build::NodeList(std::move(node))});
          block_stack_.push_back(stack);
        }
        g_.layers.push_back({.block = block->second, .window = 0, .number = key.second});
      }
    }
    past.MoveTo(built_.notes);
    if (experts_found_ && !top_k_) {
      built_.notes.push_back(
          "experts found (experts.N.) but config.json gives no num_experts_per_tok: every "
          "expert is counted as active");
    }
    return Status::Ok();
  }

  // The attention the KV cache needs, from config.json, on the stack of num_hidden_layers.
  void AttachAttention() {
    if (const std::optional<int64_t> hidden =
            keys_.Int({"hidden_size", "d_model", "n_embd"}, kMaxWidth)) {
      g_.hidden = *hidden;
    }
    const std::optional<int64_t> heads =
        keys_.Int({"num_attention_heads", "n_head", "num_heads"}, kMaxHeads);
    if (!heads || g_.hidden <= 0 || kv_stack_.empty()) {
      built_.notes.push_back(
          "KV cache unknown: it needs num_hidden_layers (matching a stack of layers in the "
          "checkpoint), num_attention_heads and hidden_size in config.json");
      return;
    }
    const AttentionShape shape = KvAttention(keys_, *heads, g_.hidden);
    Node attention = build::AttentionNode(kv_stack_ + ".{i}.attention", shape);
    attention.output_width = g_.hidden;
    attention.saves_input = false;  // its inputs are the opaque module's linear inputs
    attention.label += " (from config.json, for the KV cache)";
    for (size_t b = 0; b < g_.blocks.size(); ++b) {
      if (block_stack_[b] == kv_stack_) g_.blocks[b].nodes.push_back(attention);
    }
    built_.notes.push_back("KV cache from config.json: " + std::to_string(shape.kv_heads) +
                           " KV heads of " + std::to_string(shape.head_dim) + " on each of the " +
                           std::to_string(*layer_count_) + " layers of " + Clip(kv_stack_) +
                           "; sliding windows and latent caches are not read");
  }

  // A language model generates through a vocabulary head: stored, or tied to the embedding
  // when config.json names a generating class and does not untie it (transformers ties by
  // default). Without one (an encoder, a tower), training has no vocabulary-wide logits and
  // serving no KV cache to grow.
  void ChooseHead() {
    const nlohmann::json* tie = keys_.Find({"tie_word_embeddings"});
    const bool untied = tie && tie->is_boolean() && !tie->get<bool>();
    const bool generating_class = g_.architecture.ends_with("ForCausalLM") ||
                                  g_.architecture.ends_with("LMHeadModel") ||
                                  g_.architecture.ends_with("ForConditionalGeneration");
    const bool head_stored = !head_.tensors.empty();
    if (head_stored) {
      if (g_.vocab == 0) g_.vocab = head_.output_width;
      if (!untied && head_.output_width == g_.vocab && head_.input_width == g_.hidden &&
          !embeddings_.tensors.empty()) {
        built_.notes.push_back(
            "the stored head has the token embedding's shape: if this architecture ties them "
            "(config.json does not untie them), it is a stored copy and the count is high by " +
            Grouped(static_cast<uint64_t>(head_.output_width * head_.input_width)));
      }
      head_.label = "output head";
    } else if (g_.vocab > 0 && generating_class && !untied) {
      g_.tied = true;
      head_ = build::Head("lm_head", g_.vocab, g_.hidden, true, false, false);
      built_.notes.push_back("no head stored: tied to the token embedding (" + g_.architecture +
                             " generates; transformers ties by default)");
    }
    g_.vocab_logits = head_stored || g_.tied;
    g_.decodes = g_.vocab_logits;
    if (!g_.decodes) {
      built_.notes.push_back(
          "no output head stored or tied: read as an encoder (no logits, no KV cache)");
      for (BlockTemplate& b : g_.blocks) {
        for (Node& n : b.nodes) n.attention.caching = KvCaching::kNone;
      }
    }
  }

  void Finish() {
    if (!embeddings_.tensors.empty()) g_.embeddings.push_back(std::move(embeddings_));
    if (!positions_.tensors.empty()) g_.embeddings.push_back(std::move(positions_));
    if (!other_.tensors.empty()) {
      other_.label = "tensors outside the numbered layers";
      g_.final_nodes.push_back(std::move(other_));
    }
    if (g_.vocab_logits) g_.final_nodes.push_back(std::move(head_));
    if (const std::optional<int64_t> positions =
            keys_.Int({"max_position_embeddings", "n_positions"}, kMaxPositions)) {
      g_.max_positions = *positions;
    }
    g_.dtype = build::SafetensorsDtype(keys_.String({"torch_dtype", "dtype"}));
    if (g_.dtype.empty()) g_.dtype = layout_.MostCommonFloatDtype();
    for (std::string& note : FindingNotes(built_.found, quant_))
      built_.notes.push_back(std::move(note));
    built_.notes.push_back(
        "training activations approximate: every linear layer's input, per token; what the "
        "functions between them keep is not known without the architecture");
    g_.notes = std::move(built_.notes);
  }

  const CheckpointLayout& layout_;
  Built built_;
  GenericKeys keys_;
  Quantization quant_;
  std::optional<int64_t> top_k_, experts_, layer_count_;
  std::vector<std::string> block_stack_;  // per block: its stack
  std::string kv_stack_;
  bool experts_found_ = false;
  Node embeddings_, positions_, head_, other_;
  ModelGraph g_;
};

}  // namespace

Result<ModelGraph> BuildGraphFromCheckpoint(const std::vector<SafetensorsHeader>& headers,
                                            const nlohmann::json* config) {
  Result<CheckpointLayout> layout = CheckpointLayout::Read(headers);
  if (!layout.ok()) return layout.error();
  return Builder(*layout, config).Build();
}

}  // namespace hubwatch
