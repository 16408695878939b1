#pragma once

// A published measurement of peak GPU memory, with the settings its run used, as one record of
// measured-memory.jsonl carries them in `norm` (fixed vocabularies; tests/fixtures/calibration/
// README.md). Only `norm` is read, never the record's free text. A setting the source leaves
// open is empty. Plain value type.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "estimator/base/result.h"

namespace hubwatch {

struct MeasuredRun {
  std::string id;      // "peft-metamathqa-026"
  std::string source;  // "peft-metamathqa"
  std::string model;   // the Hub id ("meta-llama/Llama-3.2-3B"); empty for a bare context
  std::string mode;    // full lora qlora inference other_peft context_only weights_only
  std::optional<double> value_gib;  // empty: the source's unit is ambiguous, or out of memory
  bool out_of_memory = false;       // norm.oom: the run did not fit its card

  std::optional<int64_t> batch, grad_accum, seq_len, prompt_tokens, generated_tokens;
  bool data_dependent_length = false;  // padded to the longest in the batch: seq_len is a cap
  std::optional<std::string> weights_dtype, quantization, trainable_dtype, optimizer,
      optimizer_state_dtype, checkpointing, cpu_offload, loss, attention, lora_targets, parallelism,
      metric, per, gpu;
  std::optional<bool> master_weights_fp32, optimizer_in_backward, activation_offload,
      includes_cuda_context, packing;
  std::optional<int64_t> lora_r, num_gpus;
};

// Reads one record. Errors: kInvalidInput when it is not an object with an id and a `norm`
// object whose present keys have the vocabulary's types.
Result<MeasuredRun> ParseMeasuredRun(const nlohmann::json& record);

}  // namespace hubwatch
