#include "estimator/assumptions.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <type_traits>
#include <variant>

#include "estimator/base/text.h"

namespace hubwatch {
namespace {

using Member = std::variant<double Assumptions::*, int64_t Assumptions::*, bool Assumptions::*>;

struct Knob {
  std::string_view name;
  Member member;
  double min, max;
  std::string_view description;
};

const Knob kKnobs[] = {
    {"train.weight_bytes", &Assumptions::weight_bytes, 0.125, 8, "bytes per working weight (bf16)"},
    {"train.grad_bytes", &Assumptions::grad_bytes, 0, 8, "bytes per gradient (bf16)"},
    {"train.master_bytes", &Assumptions::master_bytes, 0, 8,
     "bytes per fp32 master weight (0: none, pure bf16 training)"},
    {"train.adam_m_bytes", &Assumptions::adam_m_bytes, 0, 8,
     "bytes per first moment (AdamW m, SGD momentum)"},
    {"train.adam_v_bytes", &Assumptions::adam_v_bytes, 0, 8, "bytes per AdamW second moment"},
    {"train.optimizer_in_backward", &Assumptions::optimizer_in_backward, 0, 1,
     "1: each gradient is applied and freed as backward produces it"},
    {"train.separate_step", &Assumptions::separate_step, 0, 1,
     "1: the optimizer step peaks apart from the loss (gradients, temporaries); 0: one sum"},
    {"train.state_factor", &Assumptions::state_factor, 0.1, 10,
     "multiplier on the model states (seed preset: 1.2)"},
    {"train.activation_bytes", &Assumptions::activation_bytes, 0.5, 8, "bytes per activation"},
    {"train.logits_bytes", &Assumptions::logits_bytes, 0, 64,
     "bytes per token and vocab entry at the loss's peak (fp32 logits, log-softmax, gradient)"},
    {"train.loss_chunk_tokens", &Assumptions::loss_chunk_tokens, 1, 1 << 24,
     "tokens per chunk of a chunked loss"},
    {"train.eager_attention", &Assumptions::eager_attention, 0, 1,
     "1: eager attention stores the softmax scores (b*heads*s^2); 0: SDPA/flash"},
    {"train.activation_offload", &Assumptions::activation_offload, 0, 1,
     "1: checkpointed block inputs wait in host memory"},
    {"train.gpus", &Assumptions::gpus, 1, 1 << 16,
     "data-parallel ranks train.sharding spreads over"},
    {"train.grad_accum", &Assumptions::grad_accum, 1, 1 << 16,
     "micro-batches per optimizer step (above 1, gradients stay between them)"},
    {"runtime.cuda_context_gb", &Assumptions::cuda_context_gb, 0, 100,
     "GB per card of CUDA context and kernel images, outside torch's allocator"},
    {"runtime.fragmentation", &Assumptions::fragmentation, 0, 10,
     "allocator reserve beyond allocation, per byte of the peak's transient tensors"},
    {"lora.rank", &Assumptions::lora_rank, 1, kMaxLoraRank, "LoRA rank r"},
    {"lora.base_bytes", &Assumptions::lora_base_bytes, 0.125, 8, "bytes per frozen base weight"},
    {"lora.adapter_bytes", &Assumptions::lora_adapter_bytes, 0, 64,
     "bytes per adapter parameter (fp32 weight + grad + AdamW m + v)"},
    {"qlora.block_size", &Assumptions::qlora_block, 1, 1 << 20, "NF4 quantization block size"},
    {"qlora.double_quant", &Assumptions::qlora_double_quant, 0, 1,
     "1: 8-bit block scales with fp32 scales per 256 blocks; 0: fp32 block scales"},
    {"quant.group_size", &Assumptions::quant_group, 1, 1 << 20, "GPTQ / AWQ group size"},
    {"serve.weight_bytes", &Assumptions::serve_weight_bytes, 0.125, 8, "bytes per served weight"},
    {"serve.kv_bytes", &Assumptions::kv_bytes, 0.125, 8, "bytes per KV cache element (fp8: 1)"},
    {"serve.utilization", &Assumptions::serve_utilization, 0.05, 1,
     "fraction of card memory the server may use"},
    {"serve.overhead_factor", &Assumptions::serve_overhead_factor, 1, 10,
     "multiplier on the serving total (seed preset: 1.15)"},
    {"serve.runtime_overhead_gb", &Assumptions::serve_runtime_gb, 0, 1000,
     "GB per card for CUDA graphs and non-torch memory, beyond the CUDA context"},
    {"serve.prefill_tokens", &Assumptions::prefill_tokens, 0, 1 << 24,
     "tokens per prefill step, sizing the activation peak (0: ignore activations)"},
    {"fit.borderline_factor", &Assumptions::borderline_factor, 1, 10,
     "a fit is borderline when estimate x this no longer fits"},
    {"cost.epochs", &Assumptions::epochs, 0, 1e6, "training epochs"},
    {"cost.samples", &Assumptions::samples, 0, 1e12, "training samples per epoch"},
    {"cost.global_batch", &Assumptions::global_batch, 1, 1e9, "samples per optimizer step"},
    {"cost.mfu", &Assumptions::mfu, 0.01, 1, "achieved fraction of the dense bf16 peak"},
};

// A setting that takes one of several names; `names` is indexed by the enum's value.
struct Choice {
  std::string_view name;
  std::vector<std::string_view> names;
  int (*get)(const Assumptions&);
  void (*set)(Assumptions&, int);
  std::string_view description;
};

template <auto Member>
int Get(const Assumptions& a) {
  return static_cast<int>(a.*Member);
}
template <auto Member>
void Set(Assumptions& a, int v) {
  a.*Member = static_cast<std::remove_reference_t<decltype(a.*Member)>>(v);
}
#define HW_CHOICE(member) &Get<&Assumptions::member>, &Set<&Assumptions::member>

const std::vector<std::string_view> kQuantizationNames = {"none", "nf4", "gptq_int4",
                                                          "awq_int4", "fp8", "int8"};
const std::vector<std::string_view> kOptimizerNames = {
    "adamw", "adamw_8bit", "paged_adamw_8bit", "paged_adamw_32bit", "adafactor", "sgd",
    "sgd_momentum"};
const std::vector<std::string_view> kMetricNames = {"allocated", "reserved", "card"};

const Choice kChoices[] = {
    {"train.optimizer", kOptimizerNames, HW_CHOICE(optimizer),
     "optimizer (paged ones keep their states in unified memory, outside torch's allocator)"},
    {"train.checkpointing",
     {"none", "full", "selective"},
     HW_CHOICE(checkpointing),
     "activation checkpointing: full keeps block inputs, selective keeps matmul outputs"},
    {"train.loss",
     {"standard", "chunked", "fused"},
     HW_CHOICE(loss),
     "cross-entropy over all logits at once, in chunks, or fused with the head"},
    {"train.sharding",
     {"none", "zero1", "zero2", "zero3"},
     HW_CHOICE(sharding),
     "what train.gpus share: optimizer states (zero1), + gradients (zero2, FSDP SHARD_GRAD_OP), "
     "+ weights (zero3, FSDP FULL_SHARD)"},
    {"runtime.metric", kMetricNames, HW_CHOICE(metric),
     "what totals count: torch's allocated or reserved bytes, or the whole card (nvidia-smi)"},
    {"qlora.quantization", kQuantizationNames, HW_CHOICE(qlora_quantization),
     "QLoRA base weights: nf4, gptq_int4, awq_int4, fp8, int8"},
    {"serve.quantization", kQuantizationNames, HW_CHOICE(serve_quantization),
     "served linear weights: none (serve.weight_bytes), nf4, gptq_int4, awq_int4, fp8, int8"},
};
#undef HW_CHOICE

std::string Format(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace

std::vector<std::string_view> PresetNames() { return {"hubwatch", "seed"}; }

Result<Assumptions> PresetAssumptions(std::string_view preset) {
  Assumptions a;
  if (preset == "hubwatch") return a;
  if (preset == "seed") {
    a.preset = "seed";
    a.state_factor = 1.2;
    a.cuda_context_gb = 0;  // inside the 1.2
    a.fragmentation = 0;
    a.separate_step = false;
    a.logits_bytes = 4;  // the seed's fp32 logits
    a.serve_utilization = 1.0;
    a.serve_overhead_factor = 1.15;
    a.serve_runtime_gb = 0;  // inside the 1.15
    a.prefill_tokens = 0;
    return a;
  }
  return Error::InvalidInput("--preset: unknown preset '" + Clip(preset) +
                             "' (hubwatch, seed)");
}

std::string_view OptimizerName(Optimizer optimizer) {
  return kOptimizerNames[static_cast<size_t>(optimizer)];
}

std::string_view MetricName(MemoryMetric metric) {
  return kMetricNames[static_cast<size_t>(metric)];
}

std::string_view QuantizationName(Quantization quantization) {
  return kQuantizationNames[static_cast<size_t>(quantization)];
}

std::vector<AssumptionEntry> DescribeAssumptions(const Assumptions& a) {
  std::vector<AssumptionEntry> out;
  for (const Knob& k : kKnobs) {
    std::string value = std::visit(
        [&](auto member) -> std::string {
          const auto v = a.*member;
          if constexpr (std::is_same_v<decltype(v), const bool>) return v ? "1" : "0";
          return Format(static_cast<double>(v));
        },
        k.member);
    out.push_back({std::string(k.name), std::move(value), std::string(k.description)});
    if (k.name == "train.optimizer_in_backward") {
      for (const Choice& c : kChoices) {
        out.push_back({std::string(c.name),
                       std::string(c.names[static_cast<size_t>(c.get(a))]),
                       std::string(c.description)});
      }
    }
    if (k.name == "lora.rank") {
      std::string targets;
      for (const std::string& t : a.lora_targets) targets += (targets.empty() ? "" : ",") + t;
      out.push_back(
          {"lora.targets", targets.empty() ? "all-linear" : targets,
           "adapted modules (--lora-targets); all-linear: every linear layer but the head"});
    }
  }
  return out;
}

Status SetAssumption(Assumptions& a, std::string_view name, std::string_view value) {
  for (const Choice& c : kChoices) {
    if (c.name != name) continue;
    for (size_t i = 0; i < c.names.size(); ++i) {
      if (c.names[i] == value) {
        c.set(a, static_cast<int>(i));
        return Status::Ok();
      }
    }
    std::string known;
    for (std::string_view n : c.names) known += (known.empty() ? "" : ", ") + std::string(n);
    return Error::InvalidInput("--set " + Clip(name) + ": '" + Clip(value) + "' is not one of " +
                               known);
  }
  for (const Knob& k : kKnobs) {
    if (k.name != name) continue;
    double v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v) || v < k.min ||
        v > k.max) {
      return Error::InvalidInput("--set " + Clip(name) + ": '" + Clip(value) +
                                 "' is not a number in [" + Format(k.min) + ", " + Format(k.max) +
                                 "]");
    }
    const bool integral = !std::holds_alternative<double Assumptions::*>(k.member);
    if (integral && v != std::floor(v)) {
      return Error::InvalidInput("--set " + Clip(name) + ": needs a whole number");
    }
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(a.*member)>;
          a.*member = static_cast<T>(v);
        },
        k.member);
    return Status::Ok();
  }
  std::string known;
  for (const Knob& k : kKnobs) known += (known.empty() ? "" : ", ") + std::string(k.name);
  for (const Choice& c : kChoices) known += ", " + std::string(c.name);
  return Error::InvalidInput("--set: unknown assumption '" + Clip(name) +
                             "' (known: " + known + ")");
}

}  // namespace hubwatch
