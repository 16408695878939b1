#pragma once

// Assumptions: every number the memory, fit and cost estimates rest on that is not in the
// model's config. Each has a name, a description and a value; the estimate prints them all, a
// preset sets them together, and `--set NAME=VALUE` overrides any one.
//
// Presets:
//   hubwatch (default)  derived: model states byte by byte (AdamW, bf16 mixed precision: 2 + 2 +
//                       4 + 4 + 4 = 16 B/param), activations per tensor of the actual block,
//                       fp32 logits, a 1 GB runtime overhead per card; serving as vLLM sizes it
//                       (90% of memory, weights + prefill peak + runtime, the rest KV cache).
//   seed                the page hubwatch grew from: model states "1.2 x 16 B/param", serving
//                       (weights + KV) x 1.15 on the whole card.
// Both call a fit "borderline" when it holds on the estimate but not on estimate x 1.43.
// Plain value type.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch {

// The largest LoRA rank any interface accepts (--lora-rank, --set lora.rank, the API's
// lora_rank); EstimateModel refuses others.
inline constexpr int64_t kMaxLoraRank = 65536;

struct Assumptions {
  std::string preset = "hubwatch";

  // Full fine-tune: AdamW with bf16 mixed precision.
  double weight_bytes = 2;       // bf16 working weights
  double grad_bytes = 2;         // bf16 gradients
  double master_bytes = 4;       // fp32 master weights
  double adam_m_bytes = 4;       // fp32 first moment
  double adam_v_bytes = 4;       // fp32 second moment
  double state_factor = 1.0;     // multiplies the model states (seed: 1.2)
  double activation_bytes = 2;   // bf16 activations
  double logits_bytes = 4;       // fp32 logits for the loss
  bool eager_attention = false;  // eager attention stores the score matrix; SDPA/flash do not
  bool gradient_checkpointing = false;
  double runtime_overhead_gb = 1.0;  // CUDA context, cuBLAS workspace, allocator slack, per card

  // LoRA: frozen base, trainable adapters B*A of rank r on the target linears.
  int64_t lora_rank = 16;
  std::vector<std::string> lora_targets;  // module names ("q_proj"); empty: every linear but head
  double lora_base_bytes = 2;             // frozen bf16 base weights
  double lora_adapter_bytes = 16;         // fp32 adapter weight + grad + AdamW m + v

  // QLoRA: NF4 base weights in blocks with an absmax scale each.
  int64_t qlora_block = 64;
  bool qlora_double_quant = true;  // 8-bit absmax with an fp32 scale per 256 blocks

  // Serving.
  double serve_weight_bytes = 2;       // bf16 weights
  double kv_bytes = 2;                 // bf16 KV cache (1 for fp8)
  double serve_utilization = 0.9;      // fraction of card memory the server may use
  double serve_overhead_factor = 1.0;  // multiplies weights + KV + activations (seed: 1.15)
  double serve_runtime_gb = 1.0;       // CUDA context, graphs, non-torch memory, per card
  int64_t prefill_tokens = 8192;       // tokens in one prefill step: sizes the activation peak

  // Fit.
  double borderline_factor = 1.43;

  // Cost (roofline): 6*N*tokens for full fine-tune, 4*N*tokens for LoRA.
  double epochs = 10;
  double samples = 50000;  // tokens per sample = the workload's --seq
  double global_batch = 32;
  double mfu = 0.4;  // achieved fraction of the card's dense bf16 peak
};

struct AssumptionEntry {
  std::string name;   // "train.master_bytes"
  std::string value;  // "4"
  std::string description;
};

// "hubwatch" or "seed".
Result<Assumptions> PresetAssumptions(std::string_view preset);
std::vector<std::string_view> PresetNames();

// Every assumption, in a stable order, with its current value.
std::vector<AssumptionEntry> DescribeAssumptions(const Assumptions& a);

// Sets one assumption by name from text ("train.state_factor", "1.2"). Rejects unknown names
// and values out of range.
Status SetAssumption(Assumptions& a, std::string_view name, std::string_view value);

}  // namespace hubwatch
