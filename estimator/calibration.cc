#include "estimator/calibration.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "estimator/base/text.h"

namespace hubwatch {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

Error No(std::string why) { return Error::Unsupported(std::move(why)); }

// Bytes per element of a dtype the vocabulary names for unquantized weights or states.
std::optional<double> DtypeBytes(const std::optional<std::string>& dtype) {
  if (!dtype) return std::nullopt;
  if (*dtype == "fp32") return 4;
  if (*dtype == "bf16" || *dtype == "fp16") return 2;
  if (*dtype == "fp8" || *dtype == "int8" || *dtype == "8bit") return 1;
  return std::nullopt;
}

Result<Quantization> QuantizationOf(const std::string& q, Assumptions& a) {
  if (q == "nf4" || q == "nf4_double") {
    a.qlora_double_quant = q == "nf4_double";
    return Quantization::kNf4;
  }
  if (q == "gptq_int4") return Quantization::kGptqInt4;
  if (q == "awq_int4") return Quantization::kAwqInt4;
  if (q == "fp8") return Quantization::kFp8;
  if (q == "bnb_int8") return Quantization::kInt8;
  return No("quantization '" + Clip(q) + "' is not modelled");
}

Status TrainingSettings(const MeasuredRun& r, RunSettings& s) {
  Assumptions& a = s.input.assumptions;
  if (!r.seq_len) return No("the training sequence length is not stated");
  if (!r.batch) return No("the batch size is not stated");
  if (!r.checkpointing) return No("whether activations were checkpointed is not stated");
  s.input.workload.seq = *r.seq_len;
  s.input.workload.batch = *r.batch;
  s.at_length_cap = r.data_dependent_length;
  a.grad_accum = r.grad_accum.value_or(1);

  const std::optional<double> weights = DtypeBytes(r.weights_dtype);
  const double trainable = DtypeBytes(r.trainable_dtype).value_or(weights.value_or(2));
  if (r.mode == "full") {
    s.mode = MemoryMode::kFullFinetune;
    if (!weights)
      return No("full fine-tuning of weights held as '" + Clip(r.weights_dtype.value_or("?")) +
                "'");
    a.weight_bytes = *weights;
    a.activation_bytes = *weights;  // no autocast the vocabulary could name: the weights' dtype
    a.grad_bytes = trainable;
    a.master_bytes = r.master_weights_fp32.value_or(false) && *weights < 4 ? 4 : 0;
    const double states = r.optimizer_state_dtype == "8bit"
                              ? 1
                              : DtypeBytes(r.optimizer_state_dtype).value_or(trainable);
    a.adam_m_bytes = a.adam_v_bytes = states;
  } else {
    s.mode = r.mode == "qlora" ? MemoryMode::kQlora : MemoryMode::kLora;
    if (!r.lora_r) return No("the LoRA rank is not stated");
    a.lora_rank = *r.lora_r;
    const std::string targets = r.lora_targets.value_or("");
    if (targets == "attention_qv") {
      a.lora_targets = {"q_proj", "v_proj"};
    } else if (targets == "attention_qkvo") {
      a.lora_targets = {"q_proj", "k_proj", "v_proj", "o_proj"};
    } else if (targets != "all_linear") {
      return No("LoRA targets '" + Clip(targets.empty() ? "unstated" : targets) +
                "' (modelled: attention_qv, attention_qkvo, all_linear)");
    }
    // Adapter weight, gradient and two optimizer moments, in the trainable dtype.
    a.lora_adapter_bytes = 4 * trainable;
    if (s.mode == MemoryMode::kQlora) {
      if (!r.quantization) return No("QLoRA without a stated quantization");
      Result<Quantization> q = QuantizationOf(*r.quantization, a);
      if (!q.ok()) return q.error();
      a.qlora_quantization = *q;
      a.lora_base_bytes = 2;  // what stays unquantized, in the compute dtype
    } else {
      if (!weights) return No("a LoRA base held as '" + Clip(r.weights_dtype.value_or("?")) + "'");
      a.lora_base_bytes = *weights;
      a.activation_bytes = *weights;
    }
  }

  // The vocabulary's names for these are the assumptions' own.
  const std::string optimizer = r.optimizer.value_or("unstated");
  if (optimizer == "none" || !SetAssumption(a, "train.optimizer", optimizer).ok()) {
    return No("optimizer '" + Clip(optimizer) + "'");
  }
  if (!SetAssumption(a, "train.checkpointing", *r.checkpointing).ok()) {
    return No("checkpointing '" + Clip(*r.checkpointing) + "'");
  }
  if (!SetAssumption(a, "train.loss", r.loss.value_or("standard")).ok()) {
    return No("loss '" + Clip(r.loss.value_or("")) + "'");
  }
  a.optimizer_in_backward = r.optimizer_in_backward.value_or(false);
  a.eager_attention = r.attention == "eager";
  a.activation_offload = r.activation_offload.value_or(false);
  return Status::Ok();
}

Status InferenceSettings(const MeasuredRun& r, RunSettings& s) {
  Assumptions& a = s.input.assumptions;
  if (!r.prompt_tokens) return No("the prompt length is not stated");
  if (!r.generated_tokens) return No("the generated length is not stated");
  s.mode = MemoryMode::kServe;
  s.input.workload.context = *r.prompt_tokens + *r.generated_tokens;
  s.input.workload.serving_batch = r.batch.value_or(1);
  // transformers' generate: the whole prompt in one forward pass, no server or CUDA graphs.
  a.prefill_tokens = *r.prompt_tokens;
  a.serve_runtime_gb = 0;
  if (r.quantization) {
    Result<Quantization> q = QuantizationOf(*r.quantization, a);
    if (!q.ok()) return q.error();
    a.serve_quantization = *q;
    a.serve_weight_bytes = 2;  // embeddings, norms and head stay 16-bit
  } else {
    const std::optional<double> weights = DtypeBytes(r.weights_dtype);
    if (!weights) return No("served weights held as '" + Clip(r.weights_dtype.value_or("?")) + "'");
    a.serve_weight_bytes = *weights;
  }
  return Status::Ok();
}

// The memory of the card a run's GPU names, in GiB: what its "80GB" means (A100 80GB: 81,920 MiB).
std::optional<double> CardMemoryGib(const std::optional<std::string>& gpu) {
  if (!gpu) return std::nullopt;
  if (*gpu == "A100-80GB" || *gpu == "H100-80GB") return 80;
  if (*gpu == "A100-40GB") return 40;
  if (*gpu == "H200") return 140;  // 143,771 MiB
  if (*gpu == "L40S") return 48;
  if (*gpu == "V100-16GB") return 16;
  if (*gpu == "V100-32GB") return 32;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> ConfigCandidates(const std::string& model,
                                          const std::vector<std::string>& known) {
  std::vector<std::string> out;
  if (model.empty()) return out;
  out.push_back(model);
  for (std::string_view suffix : {"-GPTQ-Int4", "-GPTQ-Int8", "-GPTQ", "-AWQ", "-Int4", "-Int8"}) {
    if (model.size() <= suffix.size() ||
        model.compare(model.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string base = model.substr(0, model.size() - suffix.size());
    out.push_back(base);
    const std::string name = base.substr(base.find('/') + 1);
    for (const std::string& id : known) {
      const size_t slash = id.find('/');
      if (slash != std::string::npos && id.compare(slash + 1, std::string::npos, name) == 0 &&
          id != base) {
        out.push_back(id);
      }
    }
    break;
  }
  return out;
}

void CalibrationConfigs::Add(const std::string& model, nlohmann::json config) {
  configs_[model] = std::make_shared<const nlohmann::json>(std::move(config));
}

const nlohmann::json* CalibrationConfigs::For(const std::string& model, std::string* used) const {
  std::vector<std::string> known;
  known.reserve(configs_.size());
  for (const auto& entry : configs_) known.push_back(entry.first);
  for (const std::string& id : ConfigCandidates(model, known)) {
    if (auto it = configs_.find(id); it != configs_.end()) {
      if (used && id != model) *used = id;
      return it->second.get();
    }
  }
  return nullptr;
}

Result<RunSettings> SettingsForRun(const MeasuredRun& r, const Assumptions& defaults) {
  if (r.mode == "other_peft") return No("a PEFT method other than LoRA (not modelled)");
  if (r.mode == "context_only" || r.mode == "weights_only") {
    return No("no training or serving step was run (" + Clip(r.mode) + ")");
  }
  if (!r.value_gib && !r.out_of_memory) {
    return No("the source's unit is ambiguous (GB or GiB: value_gib null)");
  }
  if (!r.metric) return No("the source does not say what it measured");
  RunSettings s;
  s.input.assumptions = defaults;
  Assumptions& a = s.input.assumptions;
  if (*r.metric == "allocated" || *r.metric == "active") {
    a.metric = MemoryMetric::kAllocated;
  } else if (*r.metric == "reserved") {
    a.metric = MemoryMetric::kReserved;
  } else if (*r.metric == "nvidia_smi") {
    a.metric = MemoryMetric::kCard;
    if (r.includes_cuda_context == false) a.cuda_context_gb = 0;
  } else {
    return No("metric '" + Clip(*r.metric) + "'");
  }
  if (r.cpu_offload && *r.cpu_offload != "none") {
    return No("CPU offload (" + Clip(*r.cpu_offload) + ") is not modelled");
  }
  const std::string parallelism = r.parallelism.value_or("single");
  const int64_t gpus = r.num_gpus.value_or(1);
  if (parallelism == "fsdp_full_shard" || parallelism == "zero3") {
    a.sharding = Sharding::kZero3;
  } else if (parallelism == "fsdp_shard_grad_op" || parallelism == "zero2") {
    a.sharding = Sharding::kZero2;
  } else if (parallelism == "zero1") {
    a.sharding = Sharding::kZero1;
  } else if (parallelism != "single" && parallelism != "ddp" && parallelism != "device_map") {
    return No("parallelism '" + Clip(parallelism) + "' is not modelled");
  }
  a.gpus = a.sharding == Sharding::kNone ? 1 : gpus;
  // Layers placed across cards (device_map) sum to the one-card total; data-parallel ranks each
  // hold their own peak.
  if (r.per == "sum_over_gpus" && parallelism != "device_map") {
    s.ranks_summed = static_cast<double>(gpus);
  }
  if (parallelism == "device_map") s.cards_spanned = static_cast<double>(gpus);
  if (r.mode == "inference") {
    if (Status st = InferenceSettings(r, s); !st.ok()) return st.error();
  } else if (r.mode == "full" || r.mode == "lora" || r.mode == "qlora") {
    if (Status st = TrainingSettings(r, s); !st.ok()) return st.error();
  } else {
    return No("mode '" + Clip(r.mode) + "'");
  }
  return s;
}

CalibrationCase CalibrateRun(const MeasuredRun& run, const nlohmann::json* config,
                             const Assumptions& defaults) {
  CalibrationCase c;
  c.id = run.id;
  c.source = run.source;
  c.model = run.model;
  c.mode = run.mode;
  c.metric = run.metric.value_or("");
  c.measured_gib = run.value_gib.value_or(0);
  Result<RunSettings> settings = SettingsForRun(run, defaults);
  if (!settings.ok()) {
    c.skipped = settings.error().message;
    return c;
  }
  if (!config) {
    c.skipped = "no config.json for " + Clip(run.model.empty() ? "this run" : run.model);
    return c;
  }
  RunSettings& s = *settings;
  c.at_length_cap = s.at_length_cap;
  c.metric = std::string(MetricName(s.input.assumptions.metric));
  // What the run measured, and what its card had to hold (the fit verdict's number).
  auto total = [&](EstimateInput input) -> Result<double> {
    input.cards = {Card{"calibration", "calibration", 1, 1, 0}};
    Result<Estimate> e = EstimateModel(*config, input);
    if (!e.ok()) return e.error();
    // Learned absolute positions have a row per position: a run that finished at a longer
    // nominal length read at most that many tokens per sequence.
    const bool learned =
        std::any_of(e->graph.embeddings.begin(), e->graph.embeddings.end(),
                    [](const Node& n) { return n.kind == NodeKind::kPositionEmbedding; });
    if (s.mode != MemoryMode::kServe && learned && e->graph.max_positions > 0 &&
        input.workload.seq > e->graph.max_positions) {
      c.positions_cap = e->graph.max_positions;
      input.workload.seq = e->graph.max_positions;
      e = EstimateModel(*config, input);
      if (!e.ok()) return e.error();
    }
    const MemoryPlan& plan = e->memory[static_cast<size_t>(s.mode)];
    return plan.TotalAt(plan.batch);
  };
  Result<double> estimated = total(s.input);
  if (!estimated.ok()) {
    c.skipped = "not estimated: " + estimated.error().message;
    return c;
  }
  c.estimated_gib = *estimated * s.ranks_summed / kGiB;
  c.out_of_memory = run.out_of_memory;
  if (!c.out_of_memory) c.error_pct = (c.estimated_gib - c.measured_gib) / c.measured_gib * 100;
  // The run finished on its card: the estimate must not have called it "does not fit".
  if (const std::optional<double> memory = CardMemoryGib(run.gpu)) {
    EstimateInput whole = s.input;
    whole.assumptions.metric = MemoryMetric::kCard;
    whole.assumptions.cuda_context_gb = defaults.cuda_context_gb;
    Result<double> card = total(whole);
    const bool fits = card.ok() && *card <= *memory * kGiB * s.cards_spanned;
    c.verdict_ok = fits != run.out_of_memory;
  }
  return c;
}

std::vector<CalibrationCase> CalibrateAll(const std::vector<CalibrationRun>& runs,
                                          const Assumptions& defaults) {
  std::map<std::pair<std::string, std::string>, double> context_gib;  // by source and GPU
  for (const CalibrationRun& r : runs) {
    const MeasuredRun& m = *r.run;
    if (m.mode == "context_only" && m.value_gib && m.gpu && m.metric == "nvidia_smi") {
      context_gib[{m.source, *m.gpu}] = *m.value_gib;
    }
  }
  std::vector<CalibrationCase> out;
  out.reserve(runs.size());
  for (const CalibrationRun& r : runs) {
    const MeasuredRun& m = *r.run;
    Assumptions a = defaults;
    if (m.gpu && m.metric == "nvidia_smi" && m.includes_cuda_context != false) {
      if (auto it = context_gib.find({m.source, *m.gpu}); it != context_gib.end()) {
        a.cuda_context_gb = it->second * kGiB / 1e9;
      }
    }
    out.push_back(CalibrateRun(m, r.config, a));
  }
  return out;
}

CalibrationSummary Summarize(const std::vector<CalibrationCase>& cases) {
  CalibrationSummary s;
  std::vector<double> errors;
  for (const CalibrationCase& c : cases) {
    if (!c.skipped.empty()) {
      ++s.skipped;
      continue;
    }
    if (!c.verdict_ok) ++s.wrong_verdicts;
    if (c.out_of_memory) {  // a verdict, no figure
      if (!c.verdict_ok) ++s.false_fits;
      continue;
    }
    ++s.cases;
    const double e = std::fabs(c.error_pct);
    errors.push_back(e);
    if (e >= s.worst_abs_error_pct) {
      s.worst_abs_error_pct = e;
      s.worst_id = c.id;
    }
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    const size_t n = errors.size();
    s.median_abs_error_pct = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  }
  return s;
}

namespace {

constexpr int kFragmentationSteps = 20;  // 0, 0.05, ..., 1

double GridValue(size_t step) { return static_cast<double>(step) / kFragmentationSteps; }

// Median |error| over the reserved and card cases whose run `keep` selects.
double MedianOfReserved(const std::vector<CalibrationCase>& cases,
                        const std::vector<CalibrationRun>& runs,
                        const std::function<bool(const MeasuredRun&)>& keep) {
  std::vector<CalibrationCase> kept;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (keep(*runs[i].run) && cases[i].skipped.empty() && cases[i].metric != "allocated") {
      kept.push_back(cases[i]);
    }
  }
  return kept.empty() ? 0 : Summarize(kept).median_abs_error_pct;
}

}  // namespace

std::vector<HeldOutSource> HoldOutEachSource(const std::vector<CalibrationRun>& runs) {
  // Every run at every grid value, once; each source then reads the grid it needs.
  std::vector<std::vector<CalibrationCase>> at(kFragmentationSteps + 1);
  for (size_t step = 0; step < at.size(); ++step) {
    Assumptions defaults;
    defaults.fragmentation = GridValue(step);
    at[step] = CalibrateAll(runs, defaults);
  }
  std::vector<std::string> sources;
  for (const CalibrationRun& r : runs) {
    if (std::find(sources.begin(), sources.end(), r.run->source) == sources.end()) {
      sources.push_back(r.run->source);
    }
  }
  std::sort(sources.begin(), sources.end());
  std::vector<HeldOutSource> out;
  for (const std::string& source : sources) {
    size_t best = 0;
    double best_error = 0;
    for (size_t step = 0; step < at.size(); ++step) {
      const double error = MedianOfReserved(
          at[step], runs, [&](const MeasuredRun& r) { return r.source != source; });
      if (step == 0 || error < best_error) {
        best = step;
        best_error = error;
      }
    }
    HeldOutSource h;
    h.source = source;
    h.fragmentation = GridValue(best);
    std::vector<CalibrationCase> cases;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].run->source == source) cases.push_back(at[best][i]);
    }
    h.summary = Summarize(cases);
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace hubwatch
