#pragma once

// GPU memory plans for full fine-tuning, LoRA, QLoRA and serving.
//
// A plan is linear in the batch: fixed bytes (weights, optimizer states, runtime) plus bytes per
// sample (activations, KV cache). It is kept two ways: as components (what each byte is for,
// at the plan's batch; the reports explain each from the estimate's assumptions), and as units,
// one per embedding / layer / final part, so a model too large for one card can be split into
// contiguous layer ranges. Pure functions; thread-safe.

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
  kStateOverhead,  // model states x (state_factor - 1)
  kFrozenBase,     // LoRA: the base model, not trained
  kNf4Base,        // QLoRA: 4-bit linear weights and their block scales
  kUnquantized,    // QLoRA: embeddings, norms, head, biases kept in 16 bits
  kDequantBuffer,  // QLoRA: one linear weight dequantized at a time
  kAdapters,       // LoRA adapters with their gradients and optimizer states
  kActivations,
  kRecomputedBlock,  // gradient checkpointing: one block's activations during its backward
  kLogits,           // fp32 logits for the loss
  kRuntime,          // CUDA context, workspaces
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
};

struct MemoryPlan {
  MemoryMode mode = MemoryMode::kFullFinetune;
  int64_t batch = 1;
  int64_t tokens = 0;             // seq (training) or context (serving) per sample
  uint64_t trainable_params = 0;  // all (full) or the adapters (LoRA, QLoRA); 0 serving
  std::vector<MemoryComponent> components;
  std::vector<MemoryUnit> units;
  double per_card_fixed = 0;       // every card pays it (runtime, dequant buffer, prefill peak)
  double per_card_per_sample = 0;  // every card pays it per sample (checkpoint recompute)
  double tied_head_bytes = 0;      // a card with the head but not the embedding needs a copy of
                                   // the tied embedding
  double factor = 1.0;             // multiplies every byte (seed serving overhead)
  double usable_fraction = 1.0;    // of a card's memory

  // Sums over the units plus the per-card terms, before `factor`. Set by PlanMemory.
  double fixed_bytes = 0;
  double per_sample_bytes = 0;
  // Prefix sums over the units: [i] = sum of units [0, i); units.size() + 1 entries.
  std::vector<double> cumulative_fixed;
  std::vector<double> cumulative_per_sample;

  std::string_view name() const { return ModeName(mode); }
  double Fixed() const { return fixed_bytes; }
  double PerSample() const { return per_sample_bytes; }
  double TotalAt(int64_t batch) const {
    return factor * (fixed_bytes + per_sample_bytes * static_cast<double>(batch));
  }
  double Bytes(MemoryItem item) const;  // 0 when the plan has no such component
};

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
