#pragma once

// GPU memory plans for full fine-tuning, LoRA, QLoRA and serving.
//
// A training step peaks at one of two moments: at the loss, when every activation autograd
// keeps and the loss's buffers are alive, or at the optimizer step, when every gradient and the
// optimizer's temporaries are (activations freed). So a plan holds fixed bytes (weights,
// optimizer states, CUDA context), bytes per sample (activations, KV cache) plus bytes at the
// loss whatever the batch, and the step's bytes; with L = loss_fixed + per_sample x b, its total
// at batch b is
//   factor x (fixed + (1 + reserve) x max(L, step)).
// Serving has no step, and only its activations are transient. Bytes count in the assumptions'
// metric: torch's allocated bytes (reserve 0), its reserved bytes (reserve =
// runtime.fragmentation: the caching allocator holds more than the peak's transient tensors
// occupy), or the card (+ the CUDA context and memory outside torch's allocator). A plan is kept
// two ways: as components (what each byte is for, at the plan's batch and peak; the reports
// explain each from the assumptions), and as units, one per embedding / layer / final part, so a
// model too large for one card can be split into contiguous layer ranges. Pure functions;
// thread-safe.

#include <cstdint>
#include <string_view>
#include <vector>

#include "estimator/assumptions.h"
#include "estimator/kv_cache.h"
#include "estimator/model_graph.h"

namespace hubwatch {

struct Workload {
  int64_t seq = 2048;      // training tokens per sample
  int64_t batch = 1;       // samples per training step; sequences served, unless serving_batch
  int64_t context = 4096;  // serving context length per sequence
  int64_t serving_batch = 0;  // sequences served at once; 0: `batch`

  int64_t ServingBatch() const { return serving_batch > 0 ? serving_batch : batch; }
};

enum class MemoryMode { kFullFinetune, kLora, kQlora, kServe };
std::string_view ModeName(MemoryMode mode);  // "full_finetune", "lora", "qlora", "serve"

enum class MemoryItem {
  kWeights,  // working weights (training) or served weights
  kGradients,
  kMasterWeights,  // fp32 copy for mixed precision
  kAdamFirstMoment,
  kAdamSecondMoment,
  kFrozenBase,     // LoRA: the base model, not trained
  kNf4Base,        // QLoRA: 4-bit linear weights and their block scales
  kUnquantized,    // QLoRA: embeddings, norms, head, biases kept in 16 bits
  kDequantBuffer,  // QLoRA: one linear weight dequantized at a time
  kAdapters,       // LoRA adapters with their gradients and optimizer states
  kActivations,
  kRecomputedBlock,  // gradient checkpointing: one block's activations during its backward
  kLogits,           // the loss's buffers: logits, their fp32 upcast, log-softmax, gradient
  kOptimizerStep,    // the optimizer step's temporaries
  kGatheredBlock,    // ZeRO-3 / FSDP: a block's weights gathered whole (current and next)
  kAllocatorReserve,  // reserved beyond allocated: the caching allocator's slack
  kRuntime,           // CUDA context and memory outside torch's allocator
  kKvCache,
  kPrefill,         // serving: activation peak of one prefill step
  kOverheadFactor,  // serving total x (factor - 1)
};
std::string_view ItemName(MemoryItem item);  // "fp32 master weights"

struct MemoryComponent {
  MemoryItem item;
  double bytes = 0;  // at the plan's batch
};

// units are ordered: [0] embeddings, [1..layers] one per layer, [layers + 1] final norm + head.
struct MemoryUnit {
  double fixed_bytes = 0;
  double per_sample_bytes = 0;
  double step_bytes = 0;  // its gradients and optimizer temporaries, at the step
};

struct MemoryPlan {
  MemoryMode mode = MemoryMode::kFullFinetune;
  int64_t batch = 1;
  int64_t tokens = 0;             // seq (training) or context (serving) per sample
  uint64_t trainable_params = 0;  // all (full) or the adapters (LoRA, QLoRA); 0 serving
  std::vector<MemoryComponent> components;
  std::vector<MemoryUnit> units;
  double per_card_fixed = 0;       // every card pays it (context, dequant buffer, gathered
                                   // block, prefill peak)
  double per_card_per_sample = 0;  // every card pays it per sample (checkpoint recompute)
  double loss_fixed = 0;           // at the loss whatever the batch (a chunked loss's chunk)
  double per_card_step = 0;        // every card pays it at the step (a layer's gradients)
  double tied_head_bytes = 0;      // a card with the head but not the embedding needs a copy of
                                   // the tied embedding
  double factor = 1.0;             // multiplies every byte (seed serving overhead)
  double reserve = 0;              // allocator reserve per transient byte (the formula above)
  double usable_fraction = 1.0;    // of a card's memory

  MemoryMetric metric = MemoryMetric::kCard;  // what the bytes count
  bool peaks_at_step = false;  // at the plan's batch, the optimizer step is the peak

  // Sums over the units plus the per-card terms, before `factor`. Set by PlanMemory.
  double fixed_bytes = 0;
  double per_sample_bytes = 0;
  double step_bytes = 0;
  // Prefix sums over the units: [i] = sum of units [0, i); units.size() + 1 entries.
  std::vector<double> cumulative_fixed;
  std::vector<double> cumulative_per_sample;
  std::vector<double> cumulative_step;

  std::string_view name() const { return ModeName(mode); }
  double Fixed() const { return fixed_bytes; }
  double PerSample() const { return per_sample_bytes; }
  double Step() const { return step_bytes; }
  double TotalAt(int64_t batch) const;
  bool PeaksAtStep(int64_t batch) const;
  double Bytes(MemoryItem item) const;  // 0 when the plan has no such component
};

// Bytes of a load at batch `batch` (the formula above). Shared by whole plans and card splits.
double PeakBytes(double factor, double fixed, double loss_fixed, double per_sample, double step,
                 double reserve, int64_t batch);

// LoRA adapter parameters: r * (in + out) for every targeted linear (head excluded). Poisoned
// when the count overflows 64 bits (or the rank is negative), never wrapped.
Count LoraParameters(const ModelGraph& graph, const Assumptions& a);

// The module names --lora-targets can name: those of every linear in the blocks ("q_proj",
// "down_proj", ...), each once, in graph order.
std::vector<std::string> LoraTargetModules(const ModelGraph& graph);

// In order: full fine-tune, LoRA, QLoRA, serving.
std::vector<MemoryPlan> PlanMemory(const ModelGraph& graph, const ParamCounts& params,
                                   const KvCache& kv, const Workload& workload,
                                   const Assumptions& a);

}  // namespace hubwatch
