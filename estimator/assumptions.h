#pragma once

// Assumptions: every number the memory, fit and cost estimates rest on that is not in the
// model's config. Each has a name, a description and a value; the estimate prints them all, a
// preset sets them together, and `--set NAME=VALUE` overrides any one.
//
// Presets:
//   hubwatch (default)  derived: model states byte by byte (AdamW, bf16 mixed precision: 2 + 2 +
//                       4 + 4 + 4 = 16 B/param, and the optimizer step's temporary), activations
//                       per tensor of the actual block, the loss's buffers, the CUDA context and
//                       the allocator's slack per card; serving as vLLM sizes it (90% of memory,
//                       weights + prefill peak + runtime, the rest KV cache).
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

// How training runs: the settings published runs differ in, each with the common recipe's
// default (Hugging Face Trainer on one card, bf16 mixed precision, torch AdamW).
enum class Optimizer {
  kAdamW,            // torch AdamW (foreach): m + v, and one state-sized temporary at the step
  kAdamW8bit,        // bitsandbytes: m and v in 8 bits (plus a scale per 2048), no temporary
  kPagedAdamW8bit,   // the same in CUDA unified memory: outside torch's allocator
  kPagedAdamW32bit,  // fp32 m and v in CUDA unified memory
  kAdafactor,        // factored second moment (a row and a column per matrix), no momentum
  kSgd,              // no state
  kSgdMomentum,      // one momentum buffer
};
enum class Checkpointing {
  kNone,       // autograd keeps every activation of every block
  kFull,       // each block keeps its input; its activations are recomputed in its backward
  kSelective,  // matmul outputs kept, elementwise results and attention scores recomputed
};
enum class Loss {
  kStandard,  // logits, their fp32 upcast, log-softmax and its gradient for every token
  kChunked,   // the same over loss.chunk_tokens tokens at a time
  kFused,     // a fused linear + cross-entropy kernel: no logits materialised
};
// What is split across data-parallel ranks (a ZeRO stage, or FSDP's equivalent).
enum class Sharding {
  kNone,   // each rank holds everything (one card, DDP)
  kZero1,  // optimizer states
  kZero2,  // + gradients (FSDP SHARD_GRAD_OP)
  kZero3,  // + weights, gathered one block at a time (FSDP FULL_SHARD)
};
// How base weights are quantized (QLoRA's base, the served weights).
enum class Quantization {
  kNone,      // 16-bit (the mode's weight bytes)
  kNf4,       // bitsandbytes NF4: 4 bits, an absmax per qlora.block_size (double quant option)
  kGptqInt4,  // 4 bits, fp16 scale + 4-bit zero per group, int32 g_idx per input feature
  kAwqInt4,   // 4 bits, fp16 scale + 4-bit zero per group
  kFp8,       // 1 byte, one fp32 scale per tensor
  kInt8,      // bitsandbytes LLM.int8: 1 byte, an fp32 scale per output row
};
// Which number a memory total is: torch's allocated bytes at the peak, what its caching
// allocator has reserved by then, or the card as nvidia-smi shows it (CUDA context included).
enum class MemoryMetric { kAllocated, kReserved, kCard };

struct Assumptions {
  std::string preset = "hubwatch";

  // Full fine-tune: bf16 mixed precision (bf16 working weights and gradients, fp32 master
  // weights) with torch AdamW's fp32 moments.
  double weight_bytes = 2;       // bf16 working weights
  double grad_bytes = 2;         // bf16 gradients
  double master_bytes = 4;       // fp32 master weights (0: none, pure bf16)
  double adam_m_bytes = 4;       // bytes per optimizer moment (AdamW's m and v; SGD's momentum)
  double adam_v_bytes = 4;
  Optimizer optimizer = Optimizer::kAdamW;
  bool optimizer_in_backward = false;  // each gradient applied and freed as it is produced
  bool separate_step = true;  // the optimizer step is a peak of its own, gradients and
                              // temporaries without activations (seed: states + activations)
  double state_factor = 1.0;     // multiplies the model states (seed: 1.2)
  double activation_bytes = 2;   // bf16 activations
  Loss loss = Loss::kStandard;
  double logits_bytes = 12;  // per token and vocab entry at the loss's peak: fp32 logits 4 +
                             // log-softmax 4 + its gradient 4
  int64_t loss_chunk_tokens = 1024;  // tokens per chunk of a chunked loss
  bool eager_attention = false;  // eager attention stores the score matrix; SDPA/flash do not
  Checkpointing checkpointing = Checkpointing::kNone;
  bool activation_offload = false;  // checkpointed block inputs wait in host memory
  Sharding sharding = Sharding::kNone;
  int64_t gpus = 1;                 // data-parallel ranks the sharding spreads over
  int64_t grad_accum = 1;           // micro-batches per optimizer step (>1: gradients persist)
  double cuda_context_gb = 0.5;     // per card: CUDA context and kernel images (not torch's)
  double fragmentation = 0.2;       // reserved - allocated, as a fraction of the peak's
                                    // transient tensors (activations, loss, step buffers):
                                    // tuned on published runs (hubwatch calibrate --held-out)
  MemoryMetric metric = MemoryMetric::kCard;  // what the totals and the fit tables count

  // LoRA: frozen base, trainable adapters B*A of rank r on the target linears.
  int64_t lora_rank = 16;
  std::vector<std::string> lora_targets;  // module names ("q_proj"); empty: every linear but head
  double lora_base_bytes = 2;             // frozen bf16 base weights
  double lora_adapter_bytes = 16;         // fp32 adapter weight + grad + AdamW m + v

  // QLoRA: the base's linear weights quantized (NF4 in blocks with an absmax scale each).
  Quantization qlora_quantization = Quantization::kNf4;
  int64_t qlora_block = 64;
  bool qlora_double_quant = true;  // 8-bit absmax with an fp32 scale per 256 blocks
  int64_t quant_group = 128;       // GPTQ / AWQ group size

  // Serving.
  double serve_weight_bytes = 2;       // bf16 weights
  Quantization serve_quantization = Quantization::kNone;  // of the linear weights
  double kv_bytes = 2;                 // bf16 KV cache (1 for fp8)
  double serve_utilization = 0.9;      // fraction of card memory the server may use
  double serve_overhead_factor = 1.0;  // multiplies weights + KV + activations (seed: 1.15)
  double serve_runtime_gb = 0.5;       // per card: graphs, non-torch memory (+ the CUDA context)
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

// The names --set takes for these settings ("adamw_8bit", "gptq_int4").
std::string_view OptimizerName(Optimizer optimizer);
std::string_view QuantizationName(Quantization quantization);
std::string_view MetricName(MemoryMetric metric);  // "allocated", "reserved", "card"

// Every assumption, in a stable order, with its current value.
std::vector<AssumptionEntry> DescribeAssumptions(const Assumptions& a);

// Sets one assumption by name from text ("train.state_factor", "1.2"; "train.optimizer",
// "adamw_8bit"). Rejects unknown names and values out of range or not among a setting's names.
Status SetAssumption(Assumptions& a, std::string_view name, std::string_view value);

}  // namespace hubwatch
