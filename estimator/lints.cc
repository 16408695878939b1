#include "estimator/lints.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "estimator/format.h"

namespace hubwatch {
namespace {

const Node* FirstAttention(const ModelGraph& g) {
  for (const BlockTemplate& b : g.blocks) {
    for (const Node& n : b.nodes) {
      if (n.kind == NodeKind::kAttention) return &n;
    }
  }
  return nullptr;
}

// The first `limit` names; `total` (when more than the names kept) counts them all.
std::string Join(const std::vector<std::string>& names, size_t limit = 4, uint64_t total = 0) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  total = std::max<uint64_t>(total, names.size());
  if (total > limit) out += ", ... (" + std::to_string(total) + " in all)";
  return out;
}

// One lint per key, however many ids it lists: a config.json can list a million.
void LintTokenIds(const nlohmann::json& config, const ModelGraph& g, std::vector<Lint>& out) {
  constexpr size_t kShown = 5;
  for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) continue;
    uint64_t outside = 0;
    std::vector<std::string> shown;
    auto check = [&](const nlohmann::json& id) {
      // Unsigned first: 2^64 - 1 is that, not -1.
      if (id.is_number_unsigned()) {
        if (id.get<uint64_t>() < static_cast<uint64_t>(g.vocab)) return;
      } else if (!id.is_number_integer()) {
        return;
      } else if (const int64_t v = id.get<int64_t>(); v >= 0 && v < g.vocab) {
        return;
      }
      if (shown.size() < kShown) shown.push_back(id.dump());
      ++outside;
    };
    if (it->is_array()) {
      for (const nlohmann::json& id : *it) check(id);
    } else {
      check(*it);
    }
    if (outside == 0) continue;
    const std::string vocabulary = "the vocabulary [0, " + std::to_string(g.vocab) + ")";
    std::string message = outside == 1
                              ? std::string(key) + " " + shown.front() + " is outside " + vocabulary
                              : std::string(key) + ": " + Grouped(outside) + " token ids outside " +
                                    vocabulary + "; first " + std::to_string(shown.size()) + ": " +
                                    Join(shown, kShown);
    out.push_back({LintSeverity::kError, "token_id_out_of_vocab",
                   message + ": the embedding lookup fails or the token can never be produced"});
  }
}

// The llama3 rope as transformers validates it (_validate_llama3_parameters), and what its
// frequency computation divides by: original_max_position_embeddings / low_freq_factor and
// / high_freq_factor, with high_freq_factor > low_freq_factor for the band between them.
void LintLlama3Rope(const nlohmann::json& r, const ModelGraph& g, std::vector<Lint>& out) {
  auto invalid = [&](std::string message) {
    out.push_back({LintSeverity::kError, "rope_scaling_invalid", std::move(message)});
  };
  std::optional<double> low, high;
  for (auto [key, value] : {std::pair<const char*, std::optional<double>*>{"low_freq_factor", &low},
                            {"high_freq_factor", &high}}) {
    auto it = r.find(key);
    if (it == r.end()) continue;  // reported as missing
    if (it->is_number()) *value = it->get<double>();
    if (!*value || **value <= 0) {
      invalid(std::string("rope_scaling.") + key + " must be a number > 0, got " + QuoteJson(*it));
    }
  }
  if (low && high && *high <= *low) {
    invalid("rope_scaling.high_freq_factor must be greater than low_freq_factor, got " +
            Number(*high) + " and " + Number(*low));
  }
  auto original = r.find("original_max_position_embeddings");
  if (original == r.end()) return;
  if (!original->is_number_integer() || original->get<int64_t>() <= 0) {  // 2^64 - 1 reads < 0
    invalid("rope_scaling.original_max_position_embeddings must be a positive integer, got " +
            QuoteJson(*original));
  } else if (g.max_positions > 0 && original->get<int64_t>() >= g.max_positions) {
    out.push_back({LintSeverity::kWarning, "rope_scaling_invalid",
                   "rope_scaling.original_max_position_embeddings " + original->dump() +
                       " is not below max_position_embeddings " + std::to_string(g.max_positions) +
                       ": the scaling never applies (transformers warns)"});
  }
}

void LintRope(const nlohmann::json& config, const ModelGraph& g, const Node* attn,
              std::vector<Lint>& out) {
  auto it = config.find("rope_scaling");
  if (it == config.end() || it->is_null()) return;
  const nlohmann::json& r = *it;
  if (!r.is_object()) {
    out.push_back({LintSeverity::kError, "rope_scaling_invalid", "rope_scaling is not an object"});
    return;
  }
  const bool has_new = r.contains("rope_type");
  const bool has_old = r.contains("type");
  if (!has_new && !has_old) {
    out.push_back({LintSeverity::kError, "rope_scaling_invalid",
                   "rope_scaling has neither \"rope_type\" nor \"type\""});
    return;
  }
  if (has_old && !has_new) {
    out.push_back({LintSeverity::kWarning, "rope_scaling_legacy",
                   "rope_scaling uses the legacy key \"type\"; transformers >= 4.45 reads "
                   "\"rope_type\" (the legacy key is still mapped, older readers and other "
                   "runtimes may differ)"});
  }
  const nlohmann::json& type_value = has_new ? r["rope_type"] : r["type"];
  if (!type_value.is_string()) {
    out.push_back({LintSeverity::kError, "rope_scaling_invalid", "rope type is not a string"});
    return;
  }
  std::string type = type_value.get<std::string>();
  if (type == "su") type = "longrope";  // Phi-3's early name
  struct Required {
    const char* type;
    std::vector<const char*> keys;
  };
  static const Required kRequired[] = {
      {"default", {}},
      {"linear", {"factor"}},
      {"dynamic", {"factor"}},
      {"yarn", {"factor"}},
      {"longrope", {"short_factor", "long_factor"}},
      {"llama3",
       {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}},
      {"mrope", {"mrope_section"}},
  };
  const Required* req = nullptr;
  for (const Required& q : kRequired) {
    if (type == q.type) req = &q;
  }
  if (!req) {
    out.push_back({LintSeverity::kError, "rope_scaling_invalid",
                   "rope type " + QuoteJson(type_value) + " is not one transformers knows"});
    return;
  }
  for (const char* key : req->keys) {
    if (!r.contains(key)) {
      out.push_back({LintSeverity::kError, "rope_scaling_invalid",
                     "rope_scaling of type " + type + " needs \"" + key + "\""});
    }
  }
  if (r.contains("factor") && (!r["factor"].is_number() || r["factor"].get<double>() < 1)) {
    out.push_back({LintSeverity::kError, "rope_scaling_invalid",
                   "rope_scaling factor must be a number >= 1, got " + QuoteJson(r["factor"])});
  }
  if (type == "llama3") LintLlama3Rope(r, g, out);
  if (type == "longrope" && attn) {
    const size_t want = static_cast<size_t>(attn->attention.head_dim / 2);
    for (const char* key : {"short_factor", "long_factor"}) {
      if (r.contains(key) && (!r[key].is_array() || r[key].size() != want)) {
        out.push_back({LintSeverity::kError, "rope_scaling_invalid",
                       std::string("rope_scaling.") + key +
                           " must list head_dim/2 = " + std::to_string(want) + " factors"});
      }
    }
  }
}

// The head against the checkpoint: a tied head stored anyway, an untied one missing.
void LintHead(const ModelGraph& g, const Node& head, const CheckpointComparison& c,
              std::vector<Lint>& out) {
  const std::string head_weight = head.module + ".weight";
  bool head_unexpected = false;
  for (const std::string& name : c.unexpected) {
    head_unexpected |= name == head_weight || g.base_prefix + name == head_weight;
  }
  if (g.tied && c.tied_copy_elements) {
    out.push_back({LintSeverity::kInfo, "tied_head_stored",
                   "embeddings are tied, and the checkpoint stores " + head_weight + " again (" +
                       Grouped(c.tied_copy_elements) + " duplicate elements on disk)"});
  } else if (g.tied && head_unexpected) {
    out.push_back({LintSeverity::kWarning, "tied_head_stored",
                   "tie_word_embeddings is true but the checkpoint has " + head_weight +
                       ": transformers ties the head to the embedding and ignores it; if the "
                       "head was trained separately the config is wrong"});
  }
  if (!g.tied) {
    for (const std::string& name : c.missing) {
      if (name == head_weight) {
        out.push_back({LintSeverity::kError, "untied_head_missing",
                       "tie_word_embeddings is false but the checkpoint has no " + head_weight +
                           ": transformers would initialise the head randomly"});
      }
    }
  }
}

void LintCheckpoint(const ModelGraph& g, const CheckpointComparison& c, std::vector<Lint>& out) {
  // An encoder's base model (distilbert, electra) has no head, nor anything after its layers.
  for (const Node& node : g.final_nodes) {
    if (node.kind == NodeKind::kHead) LintHead(g, node, c, out);
  }
  if (c.parameter_delta != 0 || !c.missing.empty() || !c.unexpected.empty() ||
      !c.shape_mismatches.empty()) {
    std::string msg = "the checkpoint differs from config.json by " +
                      std::to_string(c.parameter_delta) + " parameters:";
    if (!c.missing.empty()) msg += " missing " + Join(c.missing, 4, c.missing_count) + ";";
    if (!c.unexpected.empty()) {
      msg += " unexpected " + Join(c.unexpected, 4, c.unexpected_count) + ";";
    }
    std::vector<std::string> shapes;
    for (const TensorMismatch& m : c.shape_mismatches) {
      shapes.push_back(m.name + " " + m.actual + " (expected " + m.expected + ")");
    }
    if (!shapes.empty()) msg += " reshaped " + Join(shapes, 4, c.shape_mismatch_count) + ";";
    msg.pop_back();
    out.push_back({LintSeverity::kError, "checkpoint_delta", msg});
  }
  if (!c.dtype_mismatches.empty()) {
    // One phrase per (stored, expected) pair, in order of first appearance: F16 for BF16 is not
    // the same finding as BF16 where the FP8 checkpoint format expects F8_E4M3.
    struct Group {
      const TensorMismatch* first;
      size_t count;
    };
    std::vector<Group> groups;
    for (const TensorMismatch& m : c.dtype_mismatches) {
      auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& group) {
        return group.first->actual == m.actual && group.first->expected == m.expected;
      });
      if (it == groups.end()) {
        groups.push_back({&m, 1});
      } else {
        ++it->count;
      }
    }
    std::string msg;
    for (const Group& group : groups) {
      const TensorMismatch& m = *group.first;
      if (!msg.empty()) msg += "; ";
      msg +=
          std::to_string(group.count) + (group.count == 1 ? " tensor is" : " tensors are") +
          " stored as " + m.actual + " where " +
          (m.expected == g.dtype ? "torch_dtype says " + m.expected : m.expected + " is expected") +
          " (first: " + m.name + ")";
    }
    out.push_back({LintSeverity::kWarning, "checkpoint_dtype", msg});
  }
}

}  // namespace

const char* SeverityName(LintSeverity s) {
  switch (s) {
    case LintSeverity::kInfo:
      return "info";
    case LintSeverity::kWarning:
      return "warning";
    case LintSeverity::kError:
      return "error";
  }
  return "info";
}

std::vector<Lint> LintModel(const nlohmann::json& config, const ModelGraph& g,
                            const CheckpointComparison* checkpoint) {
  std::vector<Lint> out;
  if (g.approximate) {
    out.push_back(
        {LintSeverity::kWarning, "approximate_architecture",
         "model_type \"" + g.model_type + "\" is not modelled exactly; read with --assume"});
  }
  const Node* attn = FirstAttention(g);
  if (attn && attn->attention.kind != AttentionKind::kMla) {
    const AttentionShape& a = attn->attention;
    if (a.heads % a.kv_heads != 0) {
      out.push_back({LintSeverity::kError, "heads_not_divisible",
                     "num_attention_heads " + std::to_string(a.heads) +
                         " is not divisible by num_key_value_heads " + std::to_string(a.kv_heads) +
                         ": query heads cannot share KV heads evenly"});
    }
    // T5's d_kv is its head_dim, read from config.json like any other; a composite's decoder
    // reads it from text_config (Qwen3.5).
    auto given = [&](const char* key) {
      auto in = [&](const nlohmann::json& c) {
        return c.is_object() && c.contains(key) && !c[key].is_null();
      };
      return in(config) || (config.contains("text_config") && in(config["text_config"]));
    };
    const bool explicit_dim = given("head_dim") || given("d_kv");
    if (g.hidden % a.heads != 0 || g.hidden / a.heads != a.head_dim) {
      out.push_back(
          {explicit_dim ? LintSeverity::kInfo : LintSeverity::kWarning, "head_dim_differs",
           std::string(explicit_dim ? "head_dim "
                                    : "head_dim (not in config.json, the "
                                      "architecture's default) ") +
               std::to_string(a.head_dim) + " differs from hidden_size / heads = " +
               std::to_string(g.hidden) + " / " + std::to_string(a.heads) + ": q is " +
               std::to_string(a.heads * a.head_dim) + " wide, not " + std::to_string(g.hidden)});
    }
  }
  LintTokenIds(config, g, out);
  for (const LayerSpec& layer : g.layers) {
    if (layer.window > g.max_positions && g.max_positions > 0) {
      out.push_back({LintSeverity::kWarning, "sliding_window_too_large",
                     "sliding_window " + std::to_string(layer.window) +
                         " exceeds max_position_embeddings " + std::to_string(g.max_positions) +
                         ": the window never slides"});
      break;
    }
  }
  LintRope(config, g, attn, out);
  if (checkpoint) LintCheckpoint(g, *checkpoint, out);
  return out;
}

}  // namespace hubwatch
