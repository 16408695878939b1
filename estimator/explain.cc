#include "estimator/explain.h"

#include "estimator/format.h"

namespace hubwatch {
namespace {

std::string Params(double n) { return Grouped(static_cast<uint64_t>(n + 0.5)) + " params"; }

std::string PerParam(double params, double bytes) {
  return Params(params) + " x " + Number(bytes) + " B";
}

std::string PerToken(const MemoryPlan& plan, double bytes, const std::string& suffix = "") {
  const double tokens = static_cast<double>(plan.batch) * static_cast<double>(plan.tokens);
  const double per_token = bytes / tokens;
  return std::to_string(plan.batch) + " x " + Grouped(static_cast<uint64_t>(plan.tokens)) +
         " tokens x " +
         (per_token >= 1e6 ? Number(per_token / 1e6, 2) + " MB"
                           : Number(per_token / 1e3, 2) + " kB") +
         suffix;
}

// " (sharded over 8 ranks)" when a ZeRO stage spreads the training state.
std::string Sharded(const Assumptions& a) {
  if (a.sharding == Sharding::kNone || a.gpus == 1) return "";
  return " (sharded over " + std::to_string(a.gpus) + " ranks)";
}

}  // namespace

std::string PlanTitle(const MemoryPlan& plan, const Estimate& e) {
  const Assumptions& a = e.assumptions;
  const std::string rank = std::to_string(a.lora_rank);
  switch (plan.mode) {
    case MemoryMode::kFullFinetune:
      return std::string("Full fine-tune (") +
             (a.optimizer == Optimizer::kAdamW
                  ? "AdamW"
                  : "optimizer " + std::string(OptimizerName(a.optimizer))) +
             (a.master_bytes ? ", mixed precision" : "") +
             (plan.peaks_at_step ? "; peaks at the optimizer step)" : ")");
    case MemoryMode::kLora:
      return "LoRA (frozen base, rank " + rank + " adapters)";
    case MemoryMode::kQlora:
      return "QLoRA (" + std::string(QuantizationName(a.qlora_quantization)) + " base, rank " +
             rank + " adapters)";
    case MemoryMode::kServe:
      return "Serving (" + Number(a.serve_weight_bytes) + " B weights, " + Number(a.kv_bytes) +
             " B KV cache, " + Grouped(static_cast<uint64_t>(plan.tokens)) + "-token context)";
  }
  return "";
}

std::string ExplainComponent(const MemoryComponent& c, const MemoryPlan& plan, const Estimate& e) {
  const Assumptions& a = e.assumptions;
  const double P = static_cast<double>(e.params.total);
  switch (c.item) {
    // Bytes per parameter as planned: after sharding, quantization, paging.
    case MemoryItem::kWeights:
    case MemoryItem::kMasterWeights:
    case MemoryItem::kAdamFirstMoment:
    case MemoryItem::kAdamSecondMoment:
      return PerParam(P, c.bytes / P) + Sharded(a) +
             (plan.mode != MemoryMode::kServe && a.state_factor != 1
                  ? " (x " + Number(a.state_factor) + ", " + a.preset + " preset)"
                  : "");
    case MemoryItem::kGradients:
      return c.bytes < P * a.grad_bytes / static_cast<double>(a.gpus) * a.state_factor * 0.999
                 ? "one block's gradients at a time (optimizer in backward)"
                 : PerParam(P, c.bytes / P) + Sharded(a);
    case MemoryItem::kFrozenBase:
      return PerParam(P, a.lora_base_bytes);
    case MemoryItem::kNf4Base:
      if (a.qlora_quantization != Quantization::kNf4) {
        return "linear weights quantized, with their scales";
      }
      return "4 bits per linear weight, a scale per " + std::to_string(a.qlora_block) +
             (a.qlora_double_quant ? " (double-quantized)" : " (fp32)");
    case MemoryItem::kUnquantized:
      return PerParam(c.bytes / a.lora_base_bytes, a.lora_base_bytes) +
             " (embeddings, norms, biases, head)";
    case MemoryItem::kDequantBuffer:
      return "the largest linear weight, dequantized";
    case MemoryItem::kAdapters:
      return PerParam(static_cast<double>(plan.trainable_params), a.lora_adapter_bytes);
    case MemoryItem::kActivations:
      return PerToken(plan, c.bytes,
                      std::string(a.checkpointing == Checkpointing::kFull
                                      ? (a.activation_offload ? " (checkpointed, inputs offloaded)"
                                                              : " (checkpointed: block inputs)")
                                  : a.checkpointing == Checkpointing::kSelective
                                      ? " (selective checkpointing: matmul outputs)"
                                  : a.eager_attention ? " (eager attention)"
                                                      : " (SDPA/flash attention)"));
    case MemoryItem::kRecomputedBlock:
      return "one block's activations during its backward";
    case MemoryItem::kLogits:
      return (a.loss == Loss::kChunked
                  ? Grouped(static_cast<uint64_t>(a.loss_chunk_tokens)) + " tokens (one chunk)"
                  : std::to_string(plan.batch) + " x " +
                        Grouped(static_cast<uint64_t>(plan.tokens)) + " tokens") +
             " x " + Grouped(static_cast<uint64_t>(e.graph.vocab)) + " x " +
             (e.graph.loss_in_fp32
                  ? Number(a.logits_bytes) + " B (logits in fp32, log-softmax, gradient)"
                  : Number(4 * a.activation_bytes) +
                        " B (shifted logits, log-softmax, gradients, in the activations' dtype)");
    case MemoryItem::kOptimizerStep:
      return a.optimizer == Optimizer::kAdamW ? "AdamW's sqrt(v) + eps, one per trained parameter"
                                              : "the optimizer's per-tensor buffers";
    case MemoryItem::kGatheredBlock:
      return "the largest block's weights gathered whole, and the next prefetched";
    case MemoryItem::kAllocatorReserve:
      return Number(a.fragmentation * 100) +
             "% of the transient tensors, held by torch's caching allocator";
    case MemoryItem::kRuntime:
      return plan.mode == MemoryMode::kServe ? "CUDA context, graphs, non-torch memory"
                                             : "CUDA context and kernel images";
    case MemoryItem::kKvCache:
      return std::to_string(plan.batch) + " x " + Gigabytes(e.kv.bytes_per_sequence) + " per " +
             Grouped(static_cast<uint64_t>(plan.tokens)) + "-token sequence" +
             (e.kv.sliding_layers ? " (sliding layers hold their window only)" : "") +
             (e.kv.state_layers ? " (" + Number(e.kv.state_bytes_per_sequence / 1048576, 1) +
                                      " MiB of it a fixed recurrent state, whatever the length)"
                                : "");
    case MemoryItem::kPrefill:
      if (!e.graph.decodes) {
        return std::to_string(plan.batch) + " x the peak of one forward pass over a " +
               Grouped(static_cast<uint64_t>(plan.tokens)) + "-token input (no KV cache)";
      }
      return "peak of one " + Grouped(static_cast<uint64_t>(a.prefill_tokens)) +
             "-token forward step";
    case MemoryItem::kOverheadFactor:
      return "x " + Number(plan.factor) + " (" + a.preset + " preset)";
  }
  return "";
}

}  // namespace hubwatch
