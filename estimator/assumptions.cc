#include "estimator/assumptions.h"

#include <charconv>
#include <cmath>
#include <cstdio>
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
    {"train.master_bytes", &Assumptions::master_bytes, 0, 8, "bytes per fp32 master weight"},
    {"train.adam_m_bytes", &Assumptions::adam_m_bytes, 0, 8, "bytes per AdamW first moment"},
    {"train.adam_v_bytes", &Assumptions::adam_v_bytes, 0, 8, "bytes per AdamW second moment"},
    {"train.state_factor", &Assumptions::state_factor, 0.1, 10,
     "multiplier on the model states (seed preset: 1.2)"},
    {"train.activation_bytes", &Assumptions::activation_bytes, 0.5, 8, "bytes per activation"},
    {"train.logits_bytes", &Assumptions::logits_bytes, 0, 8, "bytes per logit kept for the loss"},
    {"train.eager_attention", &Assumptions::eager_attention, 0, 1,
     "1: eager attention stores the softmax scores (b*heads*s^2); 0: SDPA/flash"},
    {"train.gradient_checkpointing", &Assumptions::gradient_checkpointing, 0, 1,
     "1: keep only block inputs, recompute one block at a time"},
    {"train.runtime_overhead_gb", &Assumptions::runtime_overhead_gb, 0, 1000,
     "GB per card for CUDA context, workspaces and allocator slack"},
    {"lora.rank", &Assumptions::lora_rank, 1, kMaxLoraRank, "LoRA rank r"},
    {"lora.base_bytes", &Assumptions::lora_base_bytes, 0.125, 8, "bytes per frozen base weight"},
    {"lora.adapter_bytes", &Assumptions::lora_adapter_bytes, 0, 64,
     "bytes per adapter parameter (fp32 weight + grad + AdamW m + v)"},
    {"qlora.block_size", &Assumptions::qlora_block, 1, 1 << 20, "NF4 quantization block size"},
    {"qlora.double_quant", &Assumptions::qlora_double_quant, 0, 1,
     "1: 8-bit block scales with fp32 scales per 256 blocks; 0: fp32 block scales"},
    {"serve.weight_bytes", &Assumptions::serve_weight_bytes, 0.125, 8, "bytes per served weight"},
    {"serve.kv_bytes", &Assumptions::kv_bytes, 0.125, 8, "bytes per KV cache element (fp8: 1)"},
    {"serve.utilization", &Assumptions::serve_utilization, 0.05, 1,
     "fraction of card memory the server may use"},
    {"serve.overhead_factor", &Assumptions::serve_overhead_factor, 1, 10,
     "multiplier on the serving total (seed preset: 1.15)"},
    {"serve.runtime_overhead_gb", &Assumptions::serve_runtime_gb, 0, 1000,
     "GB per card for CUDA context, graphs and non-torch memory"},
    {"serve.prefill_tokens", &Assumptions::prefill_tokens, 0, 1 << 24,
     "tokens per prefill step, sizing the activation peak (0: ignore activations)"},
    {"fit.borderline_factor", &Assumptions::borderline_factor, 1, 10,
     "a fit is borderline when estimate x this no longer fits"},
    {"cost.epochs", &Assumptions::epochs, 0, 1e6, "training epochs"},
    {"cost.samples", &Assumptions::samples, 0, 1e12, "training samples per epoch"},
    {"cost.global_batch", &Assumptions::global_batch, 1, 1e9, "samples per optimizer step"},
    {"cost.mfu", &Assumptions::mfu, 0.01, 1, "achieved fraction of the dense bf16 peak"},
};

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
    a.runtime_overhead_gb = 0;  // inside the 1.2
    a.serve_utilization = 1.0;
    a.serve_overhead_factor = 1.15;
    a.serve_runtime_gb = 0;  // inside the 1.15
    a.prefill_tokens = 0;
    return a;
  }
  return Error::InvalidInput("--preset: unknown preset '" + Clip(preset) +
                             "' (hubwatch, seed)");
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
  return Error::InvalidInput("--set: unknown assumption '" + Clip(name) +
                             "' (known: " + known + ")");
}

}  // namespace hubwatch
