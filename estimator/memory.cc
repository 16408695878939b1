#include "estimator/memory.h"

#include <algorithm>
#include <cmath>

#include "estimator/activations.h"
#include "estimator/plan_facts.h"

namespace hubwatch {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

MemoryPlan ServePlan(const PlanFacts& s) {
  const Assumptions& a = s.a;
  const bool card = a.metric == MemoryMetric::kCard;
  // Only the forward pass's activations are transient: a server allocates its KV cache once.
  const double reserve = a.metric == MemoryMetric::kAllocated ? 0 : a.fragmentation;
  MemoryPlan p;
  p.mode = MemoryMode::kServe;
  p.metric = a.metric;
  p.batch = s.w.ServingBatch();
  p.tokens = s.w.context;
  p.factor = a.serve_overhead_factor;
  p.usable_fraction = a.serve_utilization;
  const double peak_per_token = InferencePeakBytesPerToken(s.g, a.activation_bytes);
  // A decoder's prefill runs in steps of prefill_tokens, once per card at a time; an encoder's
  // forward pass holds a whole input per sequence of the batch.
  const double prefill = s.g.decodes ? D(a.prefill_tokens) * peak_per_token : 0;
  const double runtime = card ? (a.cuda_context_gb + a.serve_runtime_gb) * 1e9 : 0;
  p.per_card_fixed = runtime + prefill * (1 + reserve);
  if (!s.g.decodes) p.per_card_per_sample = D(s.w.context) * peak_per_token * (1 + reserve);

  const double embed_bytes = s.embed_params * a.serve_weight_bytes;
  p.units.reserve(s.g.layers.size() + 2);
  p.units.push_back({embed_bytes, 0});
  double weights = embed_bytes;
  for (size_t i = 0; i < s.g.layers.size(); ++i) {
    const double layer = s.blocks[static_cast<size_t>(s.g.layers[i].block)].serve_bytes;
    p.units.push_back({layer, s.kv.layer_bytes_per_sequence[i]});
    weights += layer;
  }
  // The head: quantized checkpoints keep it (and the embedding) in 16 bits.
  p.units.push_back({s.final_params * a.serve_weight_bytes, 0});
  weights += s.final_params * a.serve_weight_bytes;
  if (s.g.tied) p.tied_head_bytes = embed_bytes;
  FinishPlan(p);

  const double b = D(p.batch);
  auto& c = p.components;
  c.push_back({MemoryItem::kWeights, weights});
  if (s.g.decodes || s.kv.bytes_per_sequence) {
    c.push_back({MemoryItem::kKvCache, b * s.kv.bytes_per_sequence});
  }
  if (prefill) c.push_back({MemoryItem::kPrefill, prefill});
  const double forward = b * p.per_card_per_sample / (1 + reserve);
  if (forward) c.push_back({MemoryItem::kPrefill, forward});
  if (reserve && prefill + forward) {
    c.push_back({MemoryItem::kAllocatorReserve, reserve * (prefill + forward)});
  }
  if (runtime) c.push_back({MemoryItem::kRuntime, runtime});
  if (p.factor != 1) {
    c.push_back({MemoryItem::kOverheadFactor, p.TotalAt(p.batch) / p.factor * (p.factor - 1)});
  }
  return p;
}

}  // namespace

std::string_view ModeName(MemoryMode mode) {
  switch (mode) {
    case MemoryMode::kFullFinetune:
      return "full_finetune";
    case MemoryMode::kLora:
      return "lora";
    case MemoryMode::kQlora:
      return "qlora";
    case MemoryMode::kServe:
      return "serve";
  }
  return "";
}

std::string_view ItemName(MemoryItem item) {
  switch (item) {
    case MemoryItem::kWeights:
      return "weights";
    case MemoryItem::kGradients:
      return "gradients";
    case MemoryItem::kMasterWeights:
      return "fp32 master weights";
    case MemoryItem::kAdamFirstMoment:
      return "AdamW first moment";
    case MemoryItem::kAdamSecondMoment:
      return "AdamW second moment";
    case MemoryItem::kFrozenBase:
      return "frozen base weights";
    case MemoryItem::kNf4Base:
      return "quantized base weights + scales";
    case MemoryItem::kUnquantized:
      return "unquantized weights";
    case MemoryItem::kDequantBuffer:
      return "dequantization buffer";
    case MemoryItem::kAdapters:
      return "adapters + grads + AdamW";
    case MemoryItem::kActivations:
      return "activations";
    case MemoryItem::kRecomputedBlock:
      return "recomputed block";
    case MemoryItem::kLogits:
      return "loss buffers";
    case MemoryItem::kOptimizerStep:
      return "optimizer step temporaries";
    case MemoryItem::kGatheredBlock:
      return "gathered block weights";
    case MemoryItem::kAllocatorReserve:
      return "allocator reserve";
    case MemoryItem::kRuntime:
      return "runtime overhead";
    case MemoryItem::kKvCache:
      return "KV cache";
    case MemoryItem::kPrefill:
      return "prefill activations";
    case MemoryItem::kOverheadFactor:
      return "overhead factor";
  }
  return "";
}

double PeakBytes(double factor, double fixed, double loss_fixed, double per_sample, double step,
                 double reserve, int64_t batch) {
  const double at_loss = loss_fixed + per_sample * static_cast<double>(batch);
  return factor * (fixed + (1 + reserve) * std::max(at_loss, step));
}

double MemoryPlan::TotalAt(int64_t b) const {
  return PeakBytes(factor, fixed_bytes, loss_fixed, per_sample_bytes, step_bytes, reserve, b);
}

bool MemoryPlan::PeaksAtStep(int64_t b) const {
  return step_bytes > loss_fixed + per_sample_bytes * static_cast<double>(b);
}

double MemoryPlan::Bytes(MemoryItem item) const {
  for (const MemoryComponent& c : components) {
    if (c.item == item) return c.bytes;
  }
  return 0;
}

Count LoraParameters(const ModelGraph& graph, const Assumptions& a) {
  auto count = [](int64_t v) {
    return v < 0 ? Count::Poisoned() : Count(static_cast<uint64_t>(v));
  };
  const std::vector<uint64_t> uses = BlockUses(graph);
  Count n = 0;
  for (size_t b = 0; b < graph.blocks.size(); ++b) {
    for (const Node& node : graph.blocks[b].nodes) {
      for (const TensorSpec& t : node.tensors) {
        if (t.role == TensorRole::kParameter && IsLoraTarget(t, a)) {
          n += Count(uses[b]) * count(a.lora_rank) * (count(t.linear_in) + count(t.linear_out)) *
               count(t.copies);
        }
      }
    }
  }
  return n;
}

std::vector<std::string> LoraTargetModules(const ModelGraph& graph) {
  std::vector<std::string> names;
  for (const BlockTemplate& block : graph.blocks) {
    for (const Node& node : block.nodes) {
      for (const TensorSpec& t : node.tensors) {
        if (t.role != TensorRole::kParameter || !t.is_linear()) continue;
        const std::string name(ModuleName(t.name));
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
  }
  return names;
}

std::vector<MemoryPlan> PlanMemory(const ModelGraph& graph, const ParamCounts& params,
                                   const KvCache& kv, const Workload& workload,
                                   const Assumptions& a) {
  const PlanFacts s = CollectPlanFacts(graph, params, kv, workload, a);
  std::vector<MemoryPlan> plans;
  plans.reserve(4);
  plans.push_back(TrainingPlan(s, MemoryMode::kFullFinetune));
  plans.push_back(TrainingPlan(s, MemoryMode::kLora));
  plans.push_back(TrainingPlan(s, MemoryMode::kQlora));
  plans.push_back(ServePlan(s));
  return plans;
}

}  // namespace hubwatch
