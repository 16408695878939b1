#pragma once

// config.json and generation_config.json: the semantic JSON diff (json_diff.h) of the two
// revisions, each operation classified by the field it touches, reported as one Change per
// file whose impact is the most severe operation's.
//
// Field impact (the first reference token of the operation's path that the table knows
// decides, so "/text_config/hidden_size" is judged as hidden_size):
//   breaking    shapes and what is loaded: hidden_size, intermediate_size, num_hidden_layers,
//               num_attention_heads, num_key_value_heads, head_dim, vocab_size, the expert
//               counts and sizes (num_experts, num_local_experts, n_routed_experts, ...),
//               the MLA ranks, tie_word_embeddings, model_type, architectures,
//               quantization_config, the GPT-2 style n_* names
//   cosmetic    transformers_version, _name_or_path, _commit_hash, _from_model_config,
//               use_cache
//   behavioral  everything else: rope_scaling, rope_theta, max_position_embeddings,
//               sliding_window, torch_dtype / dtype, token ids, generation parameters, and any
//               field the table does not know
// Schema drift: a rope_scaling object that moves from the legacy {"type", "factor"} schema (or
// from absent) to the "rope_type" schema (the Llama-3.1 change) is breaking, because the
// transformers releases that read only "type" refuse to load it; the summary says so first.
// A whole file added is behavioral; config.json removed is breaking (nothing loads),
// generation_config.json removed behavioral (generation falls back to config.json defaults).
//
// Malformed input is a kError change naming the file, and so is a diff that could not be made
// (memory exhausted: GuardedDiff). Pure, thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/diff/change.h"

namespace hubwatch::diff {

// nullopt: the file is absent at that revision.
std::vector<Change> DiffConfig(const std::optional<std::string>& before,
                               const std::optional<std::string>& after,
                               std::string_view path = "config.json");
std::vector<Change> DiffGenerationConfig(const std::optional<std::string>& before,
                                         const std::optional<std::string>& after,
                                         std::string_view path = "generation_config.json");

// The impact of an operation at `pointer` in either file, by the table above.
Impact ConfigFieldImpact(std::string_view pointer);

}  // namespace hubwatch::diff
