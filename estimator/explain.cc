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

}  // namespace

std::string PlanTitle(const MemoryPlan& plan, const Estimate& e) {
  const Assumptions& a = e.assumptions;
  const std::string rank = std::to_string(a.lora_rank);
  switch (plan.mode) {
    case MemoryMode::kFullFinetune:
      return "Full fine-tune (AdamW, mixed precision)";
    case MemoryMode::kLora:
      return "LoRA (frozen base, rank " + rank + " adapters)";
    case MemoryMode::kQlora:
      return "QLoRA (NF4 base, rank " + rank + " adapters)";
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
    case MemoryItem::kWeights:
      return PerParam(P, plan.mode == MemoryMode::kServe ? a.serve_weight_bytes : a.weight_bytes);
    case MemoryItem::kGradients:
      return PerParam(P, a.grad_bytes);
    case MemoryItem::kMasterWeights:
      return PerParam(P, a.master_bytes);
    case MemoryItem::kAdamFirstMoment:
      return PerParam(P, a.adam_m_bytes);
    case MemoryItem::kAdamSecondMoment:
      return PerParam(P, a.adam_v_bytes);
    case MemoryItem::kStateOverhead:
      return "model states x " + Number(a.state_factor) + " (" + a.preset + " preset)";
    case MemoryItem::kFrozenBase:
      return PerParam(P, a.lora_base_bytes);
    case MemoryItem::kNf4Base:
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
                      std::string(a.gradient_checkpointing ? " (checkpointed: block inputs)"
                                  : a.eager_attention      ? " (eager attention)"
                                                           : " (SDPA/flash attention)"));
    case MemoryItem::kRecomputedBlock:
      return "one block's activations during its backward";
    case MemoryItem::kLogits:
      return std::to_string(plan.batch) + " x " + Grouped(static_cast<uint64_t>(plan.tokens)) +
             " tokens x " + Grouped(static_cast<uint64_t>(e.graph.vocab)) + " x " +
             Number(a.logits_bytes) + " B";
    case MemoryItem::kRuntime:
      return plan.mode == MemoryMode::kServe ? "CUDA context, graphs, non-torch memory"
                                             : "CUDA context and workspaces";
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
