#include "estimator/checkpoint_graph.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "estimator/config_reader.h"
#include "estimator/format.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

// Module names under which transformers implementations number their layers.
constexpr std::string_view kStackNames[] = {"layers", "layer", "h", "blocks", "block"};

// Tensor names (last component) that hold quantization metadata: stored, not parameters.
constexpr std::string_view kQuantMetadata[] = {
    "qzeros",       "scales",    "g_idx",        "SCB",        "absmax",
    "quant_map",    "nested_absmax", "nested_quant_map", "weight_format", "weight_scale",
    "weight_scale_inv", "input_scale", "output_scale", "k_scale", "v_scale", "weight_zero_point"};

bool IsNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::string_view> Split(std::string_view name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

std::string Join(const std::vector<std::string_view>& parts, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out += '.';
    out += parts[i];
  }
  return out;
}

// "model.layers.12.mlp.experts.3.up_proj.weight" -> stack "model.layers", layer 12, rest
// "mlp.experts.{e}.up_proj.weight", expert 3. No numbered stack: layer -1, rest = the name.
struct NameParts {
  std::string stack;
  int64_t layer = -1;
  std::string rest;
  int64_t expert = -1;
};

NameParts ParseName(std::string_view name) {
  const std::vector<std::string_view> parts = Split(name);
  NameParts out;
  for (size_t k = 1; k + 1 < parts.size(); ++k) {
    if (!IsNumber(parts[k]) || parts[k].size() > 6) continue;
    if (std::find(std::begin(kStackNames), std::end(kStackNames), parts[k - 1]) ==
        std::end(kStackNames)) {
      continue;
    }
    out.stack = Join(parts, 0, k);
    out.layer = std::stoll(std::string(parts[k]));
    std::vector<std::string_view> rest(parts.begin() + static_cast<std::ptrdiff_t>(k) + 1,
                                       parts.end());
    for (size_t j = 1; j + 1 < rest.size(); ++j) {
      if (rest[j - 1] == "experts" && IsNumber(rest[j]) && rest[j].size() <= 6) {
        out.expert = std::stoll(std::string(rest[j]));
        rest[j] = "{e}";
        break;
      }
    }
    out.rest = Join(rest, 0, rest.size());
    return out;
  }
  out.rest = std::string(name);
  return out;
}

std::string_view Leaf(std::string_view name) {
  const size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

bool IsFloat(std::string_view dtype) {
  return dtype == "F64" || dtype == "F32" || dtype == "F16" || dtype == "BF16" ||
         dtype.rfind("F8_", 0) == 0;
}

// What the config.json around the checkpoint says, each key read alone: an invalid value is a
// note, not an error (the tensors stand on their own).
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

struct Quantization {
  std::string method;  // quantization_config.quant_method: "gptq", "awq", "bitsandbytes", ...
  int64_t bits = 4;
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

struct Built {
  std::vector<std::string> notes;
  bool packed_nf4 = false, packed_int = false, mxfp4 = false, extra = false;
};

// The TensorSpec of one stored tensor: its role, packing and, for a 2-D weight, its linear
// shape.
TensorSpec Spec(const std::string& spec_name, std::string_view full_name,
                const SafetensorsTensor& t, const std::set<std::string_view>& all_names,
                const Quantization& q, Built& built) {
  TensorSpec s;
  s.name = spec_name;
  s.dtype = t.dtype;
  s.shape = {};
  if (t.shape.size() <= TensorShape::kMaxRank) {
    TensorShape shape;
    switch (t.shape.size()) {
      case 0: shape = {}; break;
      case 1: shape = {t.shape[0]}; break;
      case 2: shape = {t.shape[0], t.shape[1]}; break;
      case 3: shape = {t.shape[0], t.shape[1], t.shape[2]}; break;
      default: shape = {t.shape[0], t.shape[1], t.shape[2], t.shape[3]}; break;
    }
    s.shape = shape;
  } else {
    s.shape = {static_cast<int64_t>(t.elements)};  // counted the same; the rank is not kept
  }
  const std::string_view leaf = Leaf(full_name);
  const std::string name(full_name);
  if (leaf == "inv_freq" || leaf == "position_ids" || leaf == "masked_bias" ||
      leaf == "_float_tensor" || EndsWith(leaf, "token_type_ids") ||
      (leaf == "bias" && t.shape.size() == 4 && t.shape[0] == 1 && t.shape[1] == 1)) {
    s.role = TensorRole::kBuffer;
    return s;
  }
  if (std::find(std::begin(kQuantMetadata), std::end(kQuantMetadata), leaf) !=
          std::end(kQuantMetadata) ||
      name.find(".quant_state.") != std::string::npos ||
      (EndsWith(leaf, "_scales") && t.dtype == "U8")) {
    s.role = TensorRole::kExtraOnDisk;
    built.extra = true;
    return s;
  }
  if (leaf == "qweight" && t.dtype == "I32" && t.shape.size() == 2) {
    s.packing = 32 / q.bits;
    const bool awq = q.method == "awq";
    s.linear_in = awq ? t.shape[0] : t.shape[0] * s.packing;
    s.linear_out = awq ? t.shape[1] * s.packing : t.shape[1];
    built.packed_int = true;
    return s;
  }
  if (t.dtype == "U8" && EndsWith(leaf, "_blocks") && t.shape.size() >= 3 &&
      t.shape.back() == 16) {
    s.packing = 2;  // MXFP4: two 4-bit values a byte, 32 a block
    built.mxfp4 = true;
    return s;
  }
  if (t.dtype == "U8" && (all_names.count(name + ".quant_state.bitsandbytes__nf4") ||
                          all_names.count(name + ".quant_state.bitsandbytes__fp4"))) {
    s.packing = 2;  // a flattened [n/2, 1]: the linear's shape is in its quant_state
    built.packed_nf4 = true;
    return s;
  }
  if (leaf == "weight" && t.shape.size() == 2 && (IsFloat(t.dtype) || t.dtype == "I8")) {
    s.linear_out = t.shape[0];
    s.linear_in = t.shape[1];
  }
  return s;
}

enum class Place { kEmbedding, kPositionEmbedding, kHead, kOther };

Place PlaceOf(std::string_view name, const SafetensorsTensor& t) {
  if (t.shape.size() != 2) return Place::kOther;
  const std::string_view leaf = Leaf(name);
  if (leaf != "weight") return Place::kOther;
  const std::string_view module = name.substr(0, name.size() - leaf.size() - 1);
  const std::string_view last = Leaf(module);
  if (module == "lm_head" || module == "embed_out" || module == "output" ||
      EndsWith(module, ".lm_head")) {
    return Place::kHead;
  }
  if (last.find("position") != std::string_view::npos || last == "wpe") {
    return Place::kPositionEmbedding;
  }
  if (last.find("embed") != std::string_view::npos || last == "wte") return Place::kEmbedding;
  return Place::kOther;
}

using Signature = std::vector<std::tuple<std::string, std::vector<int64_t>, std::string, int64_t>>;

// One build: the stored tensors in, the graph out, in the steps of Build(). Not reusable.
class Builder {
 public:
  Builder(const std::vector<SafetensorsHeader>& headers, const nlohmann::json* config)
      : headers_(headers), keys_(config, built_.notes) {}

  Result<ModelGraph> Build() {
    if (Status s = Collect(); !s.ok()) return s.error();
    ReadConfig();
    PlaceUnnumbered();
    if (Status s = BuildLayers(); !s.ok()) return s.error();
    AttachAttention();
    ChooseHead();
    Finish();
    return std::move(g_);
  }

 private:
  struct LayerTensors {
    std::map<std::string, std::vector<std::pair<int64_t, std::string_view>>> by_rest;
  };

  Status Collect() {
    for (const SafetensorsHeader& h : headers_) {
      for (const auto& [name, tensor] : h.tensors) {
        if (!stored_.emplace(name, &tensor).second) {
          return Error::InvalidInput("safetensors headers: tensor '" + Clip(name) +
                                     "' is stored in two shards");
        }
        if (stored_.size() > kMaxCheckpointTensors) {
          return Error::InvalidInput("the checkpoint holds more than " +
                                     Grouped(kMaxCheckpointTensors) + " tensors");
        }
        names_.insert(name);
      }
    }
    if (stored_.empty()) return Error::InvalidInput("the checkpoint's headers hold no tensor");
    return Status::Ok();
  }

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
    embeddings_.kind = NodeKind::kEmbedding;
    positions_.kind = NodeKind::kPositionEmbedding;
    head_.kind = NodeKind::kHead;
    other_.kind = NodeKind::kOpaque;
    for (const auto& [name, t] : stored_) {
      if (IsFloat(t->dtype)) float_elements_[t->dtype] += t->elements;
      NameParts parts = ParseName(name);
      if (parts.layer >= 0) {
        if (std::find(stacks_.begin(), stacks_.end(), parts.stack) == stacks_.end()) {
          stacks_.push_back(parts.stack);
        }
        layers_[{parts.stack, parts.layer}].by_rest[parts.rest].emplace_back(parts.expert, name);
        continue;
      }
      TensorSpec spec = Spec(std::string(name), name, *t, names_, quant_, built_);
      const Place place = PlaceOf(name, *t);
      if (place != Place::kOther) spec.linear_in = spec.linear_out = 0;  // LoRA: blocks only
      switch (place) {
        case Place::kEmbedding:
          if (g_.vocab == 0) {
            g_.vocab = t->shape[0];
            g_.hidden = t->shape[1];
          }
          embeddings_.tensors.push_back(std::move(spec));
          break;
        case Place::kPositionEmbedding:
          positions_.tensors.push_back(std::move(spec));
          break;
        case Place::kHead:
          head_.input_width = t->shape[1];
          head_.output_width = t->shape[0];
          head_.tensors.push_back(std::move(spec));
          break;
        case Place::kOther:
          other_.tensors.push_back(std::move(spec));
          break;
      }
    }
  }

  // The layers of a stack numbered at or past num_hidden_layers, when the ones below make up
  // exactly that many: stored but not loaded (DeepSeek-V3's multi-token-prediction layer).
  int64_t LoadedBelow(const std::string& stack) const {
    if (!layer_count_) return -1;
    int64_t below = 0;
    for (const auto& [key, layer] : layers_) below += key.first == stack && key.second < *layer_count_;
    return below == *layer_count_ ? *layer_count_ : -1;
  }

  // One layer's tensors as an opaque node; experts numbered 0..E-1 with one shape and dtype
  // fold into one spec with copies (routed when config.json gives top-k).
  Node LayerNode(const std::string& module, LayerTensors& layer, Signature& signature,
                 TensorRole forced_role) {
    Node node;
    node.kind = NodeKind::kOpaque;
    node.module = module;
    for (auto& [rest_name, copies] : layer.by_rest) {
      const std::string& rest = rest_name;
      std::sort(copies.begin(), copies.end());
      const SafetensorsTensor& first = *stored_.at(copies.front().second);
      bool fold = copies.front().first == 0;
      for (size_t e = 0; fold && e < copies.size(); ++e) {
        const SafetensorsTensor& t = *stored_.at(copies[e].second);
        fold = copies[e].first == static_cast<int64_t>(e) && t.shape == first.shape &&
               t.dtype == first.dtype;
      }
      auto add = [&](const std::string& spec_name, std::string_view full, int64_t n) {
        TensorSpec spec = Spec(spec_name, full, *stored_.at(full), names_, quant_, built_);
        spec.copies = n;
        if (forced_role != TensorRole::kParameter) spec.role = forced_role;
        // Every expert in one tensor along its first dimension (gpt-oss, granitemoe): under an
        // experts module, dim 0 the config's expert count.
        const std::vector<int64_t>& shape = stored_.at(full)->shape;
        const bool fused = n == 1 && experts_ && *experts_ > 1 && shape.size() >= 2 &&
                           shape[0] == *experts_ && rest.find("experts.") != std::string::npos;
        if ((n > 1 || fused) && spec.role == TensorRole::kParameter && top_k_) {
          spec.routed = true;
          spec.experts_in_dim0 = fused;
          node.moe.experts = std::max(node.moe.experts, fused ? *experts_ : n);
          node.moe.top_k = *top_k_;
        }
        experts_found_ |= n > 1 || fused;
        signature.emplace_back(spec_name, stored_.at(full)->shape, stored_.at(full)->dtype, n);
        node.tensors.push_back(std::move(spec));
      };
      if (copies.front().first < 0 || fold) {
        add(rest, copies.front().second, static_cast<int64_t>(copies.size()));
      } else {
        for (const auto& [e, full] : copies) {
          std::string spec_name = rest;
          spec_name.replace(spec_name.find("{e}"), 3, std::to_string(e));
          add(spec_name, full, 1);
        }
      }
    }
    node.label = std::to_string(node.tensors.size()) +
                 " tensor templates as stored (structure not modelled)";
    return node;
  }

  // Layers whose tensors have the same templated names, shapes and dtypes share one block.
  Status BuildLayers() {
    std::map<Signature, int> block_of;
    for (const std::string& stack : stacks_) {
      const int64_t loaded = LoadedBelow(stack);
      if (loaded >= 0 && loaded == *layer_count_) kv_stack_ = stack;
      for (auto& [key, layer] : layers_) {
        if (key.first != stack) continue;
        Signature signature;
        if (loaded >= 0 && key.second >= loaded) {
          g_.extra_nodes.push_back(LayerNode(stack + "." + std::to_string(key.second), layer,
                                             signature, TensorRole::kExtraOnDisk));
          built_.notes.push_back(Clip(stack) + "." + std::to_string(key.second) +
                                 " is stored past num_hidden_layers " +
                                 std::to_string(*layer_count_) +
                                 ": on disk, not loaded, not counted as parameters");
          continue;
        }
        Node node = LayerNode(stack + ".{i}", layer, signature, TensorRole::kParameter);
        if (node.moe.top_k > node.moe.experts && node.moe.experts > 0) {
          return Error::InvalidInput("config.json: num_experts_per_tok " +
                                     std::to_string(node.moe.top_k) + " exceeds the " +
                                     std::to_string(node.moe.experts) +
                                     " experts the checkpoint stores");
        }
        auto [it, fresh] = block_of.try_emplace(signature, static_cast<int>(g_.blocks.size()));
        if (fresh) {
          g_.blocks.push_back(
              {stack + " layer (tensors as stored)", build::NodeList(std::move(node))});
          block_stack_.push_back(stack);
        }
        g_.layers.push_back({.block = it->second, .window = 0, .number = key.second});
      }
    }
    if (experts_found_ && !top_k_) {
      built_.notes.push_back(
          "experts found (experts.N.) but config.json gives no num_experts_per_tok: every "
          "expert is counted as active");
    }
    return Status::Ok();
  }

  // The attention the KV cache needs, from config.json, on the stack of num_hidden_layers.
  void AttachAttention() {
    if (const std::optional<int64_t> hidden = keys_.Int({"hidden_size", "d_model", "n_embd"}, kMaxWidth)) {
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
    AttentionShape shape;
    shape.heads = *heads;
    const nlohmann::json* multi_query = keys_.Find({"multi_query"});
    const int64_t kv_default =
        multi_query && multi_query->is_boolean() && multi_query->get<bool>() ? 1 : *heads;
    shape.kv_heads =
        keys_.Int({"num_key_value_heads", "num_kv_heads", "n_head_kv"}, kMaxHeads).value_or(kv_default);
    shape.head_dim = shape.v_head_dim =
        keys_.Int({"head_dim"}, kMaxWidth).value_or(std::max<int64_t>(1, g_.hidden / *heads));
    shape.kind = build::KindFromHeads(shape.heads, shape.kv_heads);
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
    const bool generating_class = EndsWith(g_.architecture, "ForCausalLM") ||
                                  EndsWith(g_.architecture, "LMHeadModel") ||
                                  EndsWith(g_.architecture, "ForConditionalGeneration");
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
    if (g_.dtype.empty()) {
      uint64_t most = 0;
      g_.dtype = "BF16";
      for (const auto& [dtype, n] : float_elements_) {
        if (!n.overflowed() && n.value() > most) {
          most = n.value();
          g_.dtype = std::string(dtype);
        }
      }
    }
    if (built_.packed_int) {
      built_.notes.push_back("GPTQ/AWQ int32 qweight unpacked at " + std::to_string(quant_.bits) +
                             " bits (quantization_config.bits" +
                             (quant_.method.empty() ? "" : ", " + quant_.method) +
                             "): parameters = stored elements x " + std::to_string(32 / quant_.bits));
    }
    if (built_.packed_nf4) {
      built_.notes.push_back(
          "bitsandbytes 4-bit weights: two parameters a stored byte; their shapes are in the "
          "quant_state, which a header does not show, so LoRA does not count them");
    }
    if (built_.mxfp4) {
      built_.notes.push_back(
          "MXFP4 blocks: two parameters a stored byte; their scales are stored, not parameters");
    }
    if (built_.extra) {
      built_.notes.push_back(
          "quantization metadata (scales, zeros, absmax) stored, not counted as parameters");
    }
    built_.notes.push_back(
        "training activations approximate: every linear layer's input, per token; what the "
        "functions between them keep is not known without the architecture");
    g_.notes = std::move(built_.notes);
  }

  const std::vector<SafetensorsHeader>& headers_;
  Built built_;
  GenericKeys keys_;
  Quantization quant_;
  std::optional<int64_t> top_k_, experts_, layer_count_;
  std::map<std::string_view, const SafetensorsTensor*> stored_;
  std::set<std::string_view> names_;
  std::map<std::string_view, Count> float_elements_;
  std::vector<std::string> stacks_;  // in the order their first tensor sorts
  std::map<std::pair<std::string, int64_t>, LayerTensors> layers_;
  std::vector<std::string> block_stack_;  // per block: its stack
  std::string kv_stack_;
  bool experts_found_ = false;
  Node embeddings_, positions_, head_, other_;
  ModelGraph g_;
};

}  // namespace

Result<ModelGraph> BuildGraphFromCheckpoint(const std::vector<SafetensorsHeader>& headers,
                                            const nlohmann::json* config) {
  return Builder(headers, config).Build();
}

}  // namespace hubwatch
