#pragma once

// What every memory plan needs of one model, computed once per estimate: per block template its
// parameters, adapters, quantized bytes and activations; the model's largest tensor and block.
// Internal to the memory plans: memory.cc builds the facts and the serving plan,
// training_plan.cc the training plans. Pure functions; thread-safe.

#include <cstdint>
#include <string_view>
#include <vector>

#include "estimator/assumptions.h"
#include "estimator/kv_cache.h"
#include "estimator/memory.h"
#include "estimator/model_graph.h"

namespace hubwatch {

// Per block template: the numbers the plans need, computed once.
struct BlockFacts {
  double params = 0;
  double adapter_params = 0;
  double adapter_activation_elements = 0;  // r per targeted linear per token
  double qlora_linear_bytes = 0;           // QLoRA's base: its linears, quantized
  double unquantized_params = 0;           // norms, biases, routers that are not Linear
  double serve_bytes = 0;                  // served weights: quantized linears + the rest
  double largest_linear = 0;
  double largest_tensor = 0;
  double activation_per_token = 0;
};

// References the estimate's parts: valid while they are.
struct PlanFacts {
  const ModelGraph& g;
  const ParamCounts& params;
  const KvCache& kv;
  const Workload& w;
  const Assumptions& a;
  std::vector<BlockFacts> blocks;
  double embed_params;
  double final_params;
  double max_block_activation = 0;
  double largest_tensor = 0;
  double largest_block_params = 0;
};

PlanFacts CollectPlanFacts(const ModelGraph& graph, const ParamCounts& params, const KvCache& kv,
                           const Workload& workload, const Assumptions& a);

// "model.layers.{i}.self_attn.q_proj.weight" -> "q_proj"
std::string_view ModuleName(std::string_view tensor_name);
bool IsLoraTarget(const TensorSpec& t, const Assumptions& a);
double FinalActivationPerToken(const ModelGraph& g, int64_t seq, const Assumptions& a);

// Sets a plan's prefix sums, totals and peak from its units and per-card terms.
void FinishPlan(MemoryPlan& p);

// Full fine-tune, LoRA or QLoRA (training_plan.cc). REQUIRES: mode is not kServe.
MemoryPlan TrainingPlan(const PlanFacts& s, MemoryMode mode);

}  // namespace hubwatch
