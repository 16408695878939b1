#include "tracker/diff/config_diff.h"

#include <array>

#include "tracker/diff/json_file.h"
#include "tracker/diff/json_text.h"

namespace hubwatch::diff {
namespace {

constexpr std::array<std::string_view, 42> kBreakingFields = {
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "num_experts",
    "num_local_experts",
    "n_routed_experts",
    "n_shared_experts",
    "num_shared_experts",
    "moe_intermediate_size",
    "shared_expert_intermediate_size",
    "first_k_dense_replace",
    "moe_layer_freq",
    "decoder_sparse_step",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
    "num_nextn_predict_layers",
    "tie_word_embeddings",
    "model_type",
    "architectures",
    "quantization_config",
    "n_embd",
    "n_layer",
    "n_head",
    "n_inner",
    "n_positions",
    "n_head_kv",
    "num_kv_heads",
    "multi_query",
    "new_decoder_architecture",
    "d_model",
    "num_layers",
    "ffn_dim",
    "d_ff",
    "d_kv",
    "num_heads",
};

constexpr std::array<std::string_view, 5> kCosmeticFields = {
    "transformers_version", "_name_or_path", "_commit_hash", "_from_model_config", "use_cache",
};

// The behavioral fields the issue names; listed so that the table documents them (every
// unknown field is behavioral too).
constexpr std::array<std::string_view, 24> kBehavioralFields = {
    "rope_scaling",
    "rope_theta",
    "max_position_embeddings",
    "sliding_window",
    "torch_dtype",
    "dtype",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "decoder_start_token_id",
    "temperature",
    "top_p",
    "top_k",
    "do_sample",
    "max_length",
    "max_new_tokens",
    "min_length",
    "repetition_penalty",
    "num_beams",
    "use_sliding_window",
    "rms_norm_eps",
    "partial_rotary_factor",
    "attn_logit_softcapping",
    "final_logit_softcapping",
};

template <size_t N>
bool Contains(const std::array<std::string_view, N>& table, std::string_view key) {
  for (std::string_view entry : table) {
    if (entry == key) return true;
  }
  return false;
}

// Describes a rope_scaling move to the "rope_type" schema at `prefix` ("" or "text_config"),
// or returns nullopt.
std::optional<std::string> RopeSchemaChange(const nlohmann::json& before,
                                            const nlohmann::json& after, const std::string& prefix,
                                            nlohmann::json& notes) {
  auto rope_of = [&](const nlohmann::json& doc) -> const nlohmann::json* {
    const nlohmann::json* scope = &doc;
    if (!prefix.empty()) {
      auto it = doc.find(prefix);
      if (it == doc.end() || !it->is_object()) return nullptr;
      scope = &*it;
    }
    auto it = scope->find("rope_scaling");
    return it == scope->end() || it->is_null() ? nullptr : &*it;
  };
  const nlohmann::json* old_rope = rope_of(before);
  const nlohmann::json* new_rope = rope_of(after);
  if (new_rope == nullptr || !new_rope->is_object() || !new_rope->contains("rope_type") ||
      new_rope->contains("type")) {
    return std::nullopt;
  }
  const std::string where = prefix.empty() ? "rope_scaling" : prefix + ".rope_scaling";
  const std::string new_type = ShortJson((*new_rope)["rope_type"]);
  const std::string consequence =
      "transformers releases that read only {\"type\", \"factor\"} refuse to load it";
  bool cut = false;  // a rope_type is a short string; upstream may write anything there
  nlohmann::json note = {{"field", where},
                         {"to_schema", "rope_type"},
                         {"rope_type", CapJson((*new_rope)["rope_type"], 256, &cut)}};
  std::string text;
  if (old_rope == nullptr) {
    note["from_schema"] = nullptr;
    text = where + " added in the \"rope_type\" schema (" + new_type + "); " + consequence;
  } else if (old_rope->is_object() && old_rope->contains("type") &&
             !old_rope->contains("rope_type")) {
    note["from_schema"] = "type";
    text = where + " schema changed: legacy \"type\" " + ShortJson((*old_rope)["type"]) +
           " -> \"rope_type\" " + new_type + "; " + consequence;
  } else {
    return std::nullopt;
  }
  notes.push_back(std::move(note));
  return text;
}

std::vector<Change> DiffConfigFile(const std::optional<std::string>& before,
                                   const std::optional<std::string>& after, std::string_view path,
                                   ChangeKind kind) {
  std::vector<Change> changes;
  std::optional<JsonFilePair> pair = ParseJsonFilePair(before, after, path, kind, changes);
  if (!pair) return changes;
  std::vector<std::string> lead;
  nlohmann::json schema_notes = nlohmann::json::array();
  if (pair->after) {
    // A config that arrives with the "rope_type" schema (Llama 3.1's) is news too: loaders
    // older than the schema refuse it.
    static const nlohmann::json kNothing = nlohmann::json::object();
    const nlohmann::json& base = pair->before ? *pair->before : kNothing;
    for (const std::string prefix : {"", "text_config"}) {
      if (auto text = RopeSchemaChange(base, *pair->after, prefix, schema_notes)) {
        lead.push_back(std::move(*text));
      }
    }
  }
  std::optional<Change> change = FieldsChange(
      kind, path, *pair, [](const JsonOp& op) { return ConfigFieldImpact(op.path); }, lead);
  if (!change) return changes;
  if (!schema_notes.empty()) {
    change->impact = Impact::kBreaking;
    change->details["schema_changes"] = std::move(schema_notes);
  }
  if (!pair->before) change->impact = Impact::kBehavioral;
  if (!pair->after) {
    change->impact = kind == ChangeKind::kConfig ? Impact::kBreaking : Impact::kBehavioral;
  }
  changes.push_back(std::move(*change));
  return changes;
}

}  // namespace

Impact ConfigFieldImpact(std::string_view pointer) {
  size_t pos = 1;
  while (pos <= pointer.size()) {
    size_t next = pointer.find('/', pos);
    if (next == std::string_view::npos) next = pointer.size();
    const std::string_view token = pointer.substr(pos, next - pos);
    if (Contains(kBreakingFields, token)) return Impact::kBreaking;
    if (Contains(kCosmeticFields, token)) return Impact::kCosmetic;
    if (Contains(kBehavioralFields, token)) return Impact::kBehavioral;
    pos = next + 1;
  }
  return Impact::kBehavioral;
}

std::vector<Change> DiffConfig(const std::optional<std::string>& before,
                               const std::optional<std::string>& after, std::string_view path) {
  return GuardedDiff(path,
                     [&] { return DiffConfigFile(before, after, path, ChangeKind::kConfig); });
}

std::vector<Change> DiffGenerationConfig(const std::optional<std::string>& before,
                                         const std::optional<std::string>& after,
                                         std::string_view path) {
  return GuardedDiff(
      path, [&] { return DiffConfigFile(before, after, path, ChangeKind::kGenerationConfig); });
}

}  // namespace hubwatch::diff
