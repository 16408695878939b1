#pragma once

// Lints: configuration mistakes and checkpoint disagreements that break or silently change a
// model, each a value with a severity, a stable code and a message naming the fields involved.
//
//   heads_not_divisible       num_attention_heads % num_key_value_heads != 0
//   head_dim_differs          head_dim (explicit or the architecture's default) != hidden/heads
//   token_id_out_of_vocab     bos/eos/pad token id >= vocab_size (or negative)
//   sliding_window_too_large  sliding_window > max_position_embeddings on sliding layers
//   rope_scaling_legacy       rope_scaling uses the legacy "type" key, not "rope_type"
//   rope_scaling_invalid      unknown rope type or a required key missing / out of range
//   tied_head_stored          tied embeddings, but the checkpoint stores a head anyway
//   untied_head_missing       untied embeddings, but the checkpoint has no head
//   checkpoint_delta          the checkpoint disagrees with the config, tensor by tensor
//   checkpoint_dtype          tensors stored in a dtype other than torch_dtype
//   approximate_architecture  the model was read with --assume
// Pure function; thread-safe.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "estimator/checkpoint.h"
#include "estimator/model_graph.h"

namespace hubwatch {

enum class LintSeverity { kInfo, kWarning, kError };
const char* SeverityName(LintSeverity s);  // "info", "warning", "error"

struct Lint {
  LintSeverity severity = LintSeverity::kInfo;
  std::string code;
  std::string message;
};

std::vector<Lint> LintModel(const nlohmann::json& config, const ModelGraph& graph,
                            const CheckpointComparison* checkpoint);

}  // namespace hubwatch
