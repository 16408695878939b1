#pragma once

// GPU memory plans for full fine-tuning, LoRA, QLoRA and serving.
//
// A plan is linear in the batch: fixed bytes (weights, optimizer states, runtime) plus bytes per
// sample (activations, KV cache). It is kept both as an explained list of components (what the
// reports print, each with how it was computed) and as units, one per embedding / layer / final
// part, so a model too large for one card can be split into contiguous layer ranges.
// Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/assumptions.h"
#include "estimator/kv_cache.h"
#include "estimator/model_graph.h"

namespace hubwatch {

struct Workload {
  int64_t seq = 2048;      // training tokens per sample
  int64_t batch = 1;       // samples (training) or sequences (serving) per step
  int64_t context = 4096;  // serving context length per sequence
};

enum class MemoryMode { kFullFinetune, kLora, kQlora, kServe };

struct MemoryComponent {
  std::string name;  // "fp32 master weights"
  double bytes = 0;  // at the plan's batch
  std::string how;   // "9,241,705,984 params x 4 B"
};

struct MemoryUnit {
  std::string label;  // "embed", "block 12", "norm + head"
  double fixed_bytes = 0;
  double per_sample_bytes = 0;
};

struct MemoryPlan {
  MemoryMode mode = MemoryMode::kFullFinetune;
  std::string name;   // "full_finetune", "lora", "qlora", "serve"
  std::string title;  // "Full fine-tune (AdamW, bf16 mixed precision)"
  int64_t batch = 1;
  int64_t tokens = 0;  // seq (training) or context (serving) per sample
  uint64_t trainable_params = 0;
  std::vector<MemoryComponent> components;
  std::vector<MemoryUnit> units;
  double per_card_fixed = 0;       // every card pays it (runtime, dequant buffer, prefill peak)
  double per_card_per_sample = 0;  // every card pays it per sample (checkpoint recompute)
  double factor = 1.0;             // multiplies every byte (seed serving overhead)
  double usable_fraction = 1.0;    // of a card's memory

  double Fixed() const;
  double PerSample() const;
  double TotalAt(int64_t batch) const {
    return factor * (Fixed() + PerSample() * static_cast<double>(batch));
  }
};

// LoRA adapter parameters: r * (in + out) for every targeted linear (head excluded).
uint64_t LoraParameters(const ModelGraph& graph, const Assumptions& a);

std::vector<MemoryPlan> PlanMemory(const ModelGraph& graph, const ParamCounts& params,
                                   const KvCache& kv, const Workload& workload,
                                   const Assumptions& a);

}  // namespace hubwatch
