// The training plans: full fine-tune, LoRA and QLoRA (memory.h says how a plan peaks).

#include <algorithm>

#include "estimator/plan_facts.h"

namespace hubwatch {
namespace {

double D(uint64_t v) { return static_cast<double>(v); }
double D(int64_t v) { return static_cast<double>(v); }

// What the optimizer keeps per trained parameter, and what its step allocates besides.
struct OptimizerBytes {
  double m = 0, v = 0;      // per parameter
  bool unified = false;     // paged: in CUDA unified memory, outside torch's allocator
  double temp = 0;          // per parameter, at the step (foreach AdamW's sqrt(v) + eps)
  double temp_largest = 0;  // per element of the largest tensor (a per-tensor loop's buffers)
};

OptimizerBytes OptimizerOf(const Assumptions& a) {
  constexpr double kBnbScales = 4.0 / 2048;  // an fp32 absmax per 2048 values, per state
  switch (a.optimizer) {
    case Optimizer::kAdamW:
      return {a.adam_m_bytes, a.adam_v_bytes, false, std::max(a.adam_m_bytes, a.adam_v_bytes), 0};
    case Optimizer::kAdamW8bit:
      return {1 + kBnbScales, 1 + kBnbScales, false, 0, 0};
    case Optimizer::kPagedAdamW8bit:
      return {1 + kBnbScales, 1 + kBnbScales, true, 0, 0};
    case Optimizer::kPagedAdamW32bit:
      return {4, 4, true, 0, 0};
    case Optimizer::kAdafactor:  // factored: O(rows + cols) per matrix; update and grad^2
      return {0, 0, false, 0, 8};
    case Optimizer::kSgd:
      return {0, 0, false, 0, 0};
    case Optimizer::kSgdMomentum:
      return {a.adam_m_bytes, 0, false, 0, 0};
  }
  return {};
}

// How the training modes differ: what their weights cost, per unit of parameters.
struct TrainingShape {
  MemoryMode mode;
  double shard_weights;  // divides weights: train.gpus under ZeRO-3, else 1
  double shard_states;   // divides master weights and optimizer states (ZeRO-1 and up)
  double shard_grads;    // divides gradients (ZeRO-2 and up)
};

}  // namespace

// Training plans share their unit layout: embed, one unit per layer, final norm + head.
MemoryPlan TrainingPlan(const PlanFacts& s, MemoryMode mode) {
  const Assumptions& a = s.a;
  const OptimizerBytes opt = OptimizerOf(a);
  const double gpus = D(a.gpus);
  const TrainingShape shape{mode, a.sharding == Sharding::kZero3 ? gpus : 1,
                            a.sharding != Sharding::kNone ? gpus : 1,
                            a.sharding >= Sharding::kZero2 ? gpus : 1};
  const bool card = a.metric == MemoryMetric::kCard;
  const double states_bytes = opt.unified && !card ? 0 : opt.m + opt.v;
  // Gradients wait for the step unless accumulation keeps them between micro-batches, or the
  // seed preset's model (no step of its own) counts them with the states.
  const bool grads_persist = a.grad_accum > 1 || !a.separate_step;
  const double seq = D(s.w.seq);
  const double vocab = s.g.vocab_logits ? D(s.g.vocab) : 0;
  // The loss's buffers: for every token (standard), for one chunk (chunked), none (fused). Per
  // logit, train.logits_bytes (fp32 logits, log-softmax and its gradient); a loss in the
  // activations' dtype keeps a shifted copy, log-softmax, its gradient and the input gradient.
  const double per_logit = s.g.loss_in_fp32 ? a.logits_bytes : 4 * a.activation_bytes;
  const double loss_per_token = a.loss == Loss::kStandard ? vocab * per_logit : 0;
  const double loss_chunk =
      a.loss == Loss::kChunked ? D(a.loss_chunk_tokens) * vocab * per_logit : 0;
  const double final_act = FinalActivationPerToken(s.g, s.w.seq, a);

  MemoryPlan p;
  p.mode = mode;
  p.metric = a.metric;
  p.batch = s.w.batch;
  p.tokens = s.w.seq;
  p.per_card_fixed = card ? a.cuda_context_gb * 1e9 : 0;
  p.reserve = a.metric == MemoryMetric::kAllocated ? 0 : a.fragmentation;
  p.loss_fixed = loss_chunk;
  const bool checkpointed = a.checkpointing == Checkpointing::kFull;
  if (checkpointed) p.per_card_per_sample = seq * s.max_block_activation;

  const bool full = mode == MemoryMode::kFullFinetune;
  // Per unit of parameters: persistent bytes, and gradients + optimizer temporaries at the step.
  auto fixed_of = [&](double params, double qlora_bytes) {
    switch (mode) {
      case MemoryMode::kFullFinetune: {
        const double states = params * (a.master_bytes + states_bytes) / shape.shard_states;
        const double grads = grads_persist ? params * a.grad_bytes / shape.shard_grads : 0;
        return (params * a.weight_bytes / shape.shard_weights + states + grads) * a.state_factor;
      }
      case MemoryMode::kQlora:
        return qlora_bytes / shape.shard_weights;
      default:
        return params * a.lora_base_bytes / shape.shard_weights;
    }
  };
  auto step_of = [&](double params) {
    if (!full || a.optimizer_in_backward) return 0.0;
    const double grads = grads_persist ? 0 : params * a.grad_bytes / shape.shard_grads;
    return grads * a.state_factor + params * opt.temp / shape.shard_states;
  };
  const bool adapters = !full;
  double adapter_params = 0, largest_linear = 0, quantized = 0;
  double largest_block_weights = 0;  // one block's weights whole, as this mode stores them
  double unquantized = s.embed_params + s.final_params;
  p.units.reserve(s.g.layers.size() + 2);
  const double embed_qlora = s.embed_params * a.lora_base_bytes;
  p.units.push_back({fixed_of(s.embed_params, embed_qlora), 0, step_of(s.embed_params)});
  for (const LayerSpec& layer : s.g.layers) {
    const BlockFacts& f = s.blocks[static_cast<size_t>(layer.block)];
    const double adapter_bytes = adapters ? f.adapter_params * a.lora_adapter_bytes : 0;
    const double per_token = checkpointed
                                 ? (a.activation_offload ? 0 : D(s.g.hidden) * a.activation_bytes)
                                 : f.activation_per_token;
    const double adapter_per_token =
        adapters ? f.adapter_activation_elements * a.activation_bytes : 0;
    const double qlora_bytes = f.qlora_linear_bytes + f.unquantized_params * a.lora_base_bytes;
    largest_block_weights =
        std::max(largest_block_weights, full                         ? f.params * a.weight_bytes
                                        : mode == MemoryMode::kQlora ? qlora_bytes
                                                                     : f.params * a.lora_base_bytes);
    p.units.push_back(
        {fixed_of(f.params, qlora_bytes) + adapter_bytes,
         seq * (per_token + adapter_per_token), step_of(f.params)});
    if (adapters) adapter_params += f.adapter_params;
    largest_linear = std::max(largest_linear, f.largest_linear);
    quantized += f.qlora_linear_bytes;
    unquantized += f.unquantized_params;
  }
  const double final_qlora = s.final_params * a.lora_base_bytes;
  p.units.push_back({fixed_of(s.final_params, final_qlora), seq * (final_act + loss_per_token),
                     step_of(s.final_params)});
  if (s.g.tied) p.tied_head_bytes = fixed_of(s.embed_params, embed_qlora);

  // Applied as each gradient arrives: one layer's gradients (and a per-tensor temporary) at once.
  if (full && a.optimizer_in_backward) {
    p.per_card_step =
        s.largest_block_params * (a.grad_bytes * a.state_factor + opt.temp / shape.shard_states);
  }
  p.per_card_step += s.largest_tensor * opt.temp_largest;
  // ZeRO-3 / FSDP FULL_SHARD gathers a block's weights whole, as they are stored (a QLoRA
  // block's in 4 bits), and prefetches the next.
  const double gathered = shape.shard_weights > 1 ? 2 * largest_block_weights : 0;
  p.per_card_fixed += gathered;
  const double dequant = mode == MemoryMode::kQlora ? largest_linear * a.lora_base_bytes : 0;
  p.per_card_fixed += dequant;
  FinishPlan(p);

  // The components at the plan's batch, of whichever moment peaks, and the allocator's reserve.
  const bool at_step = p.peaks_at_step;
  const double P = D(s.params.total);
  const double b = D(s.w.batch);
  auto& c = p.components;
  if (full) {
    p.trainable_params = s.params.total;
    const double f = a.state_factor;
    c.push_back({MemoryItem::kWeights, P * a.weight_bytes / shape.shard_weights * f});
    if (grads_persist) {
      c.push_back({MemoryItem::kGradients, P * a.grad_bytes / shape.shard_grads * f});
    } else if (at_step) {
      const double grads = a.optimizer_in_backward ? s.largest_block_params * a.grad_bytes
                                                   : P * a.grad_bytes / shape.shard_grads;
      c.push_back({MemoryItem::kGradients, grads * f});
    }
    if (a.master_bytes) {
      c.push_back({MemoryItem::kMasterWeights, P * a.master_bytes / shape.shard_states * f});
    }
    const double state_share = opt.unified && !card ? 0 : f / shape.shard_states;
    if (opt.m) c.push_back({MemoryItem::kAdamFirstMoment, P * opt.m * state_share});
    if (opt.v) c.push_back({MemoryItem::kAdamSecondMoment, P * opt.v * state_share});
  } else {
    p.trainable_params = static_cast<uint64_t>(adapter_params);
    if (mode == MemoryMode::kQlora) {
      c.push_back({MemoryItem::kNf4Base, quantized / shape.shard_weights});
      c.push_back(
          {MemoryItem::kUnquantized, unquantized * a.lora_base_bytes / shape.shard_weights});
      if (dequant) c.push_back({MemoryItem::kDequantBuffer, dequant});
    } else {
      c.push_back({MemoryItem::kFrozenBase, P * a.lora_base_bytes / shape.shard_weights});
    }
    c.push_back({MemoryItem::kAdapters, adapter_params * a.lora_adapter_bytes});
  }
  if (gathered) c.push_back({MemoryItem::kGatheredBlock, gathered});
  const double at_loss = p.loss_fixed + p.per_sample_bytes * b;
  if (at_step) {
    double temp = p.step_bytes;
    for (const MemoryComponent& g : c) {
      if (g.item == MemoryItem::kGradients && !grads_persist) temp -= g.bytes;
    }
    if (temp > 1e-6 * p.step_bytes) c.push_back({MemoryItem::kOptimizerStep, temp});
  } else {
    const double recomputed = b * p.per_card_per_sample;
    const double loss = b * seq * loss_per_token + loss_chunk;
    c.push_back({MemoryItem::kActivations, at_loss - recomputed - loss});
    if (recomputed) c.push_back({MemoryItem::kRecomputedBlock, recomputed});
    if (loss) c.push_back({MemoryItem::kLogits, loss});
  }
  if (p.reserve) {
    c.push_back({MemoryItem::kAllocatorReserve, p.reserve * std::max(at_loss, p.step_bytes)});
  }
  if (card && a.cuda_context_gb) c.push_back({MemoryItem::kRuntime, a.cuda_context_gb * 1e9});
  return p;
}

}  // namespace hubwatch
