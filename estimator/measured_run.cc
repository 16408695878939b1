#include "estimator/measured_run.h"

#include <nlohmann/json.hpp>

#include "estimator/base/text.h"

namespace hubwatch {
namespace {

// Reads norm[key] into `out` when present and not null; a value of the wrong type is an error.
template <typename T>
Status Read(const nlohmann::json& norm, const char* key, std::optional<T>& out) {
  const auto it = norm.find(key);
  if (it == norm.end() || it->is_null()) return Status::Ok();
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return Error::InvalidInput(std::string("norm.") + key + ": not a string");
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return Error::InvalidInput(std::string("norm.") + key + ": not a bool");
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (!it->is_number_integer()) {
      return Error::InvalidInput(std::string("norm.") + key + ": not an integer");
    }
  } else {
    if (!it->is_number()) return Error::InvalidInput(std::string("norm.") + key + ": not a number");
  }
  out = it->get<T>();
  return Status::Ok();
}

}  // namespace

Result<MeasuredRun> ParseMeasuredRun(const nlohmann::json& record) {
  if (!record.is_object()) return Error::InvalidInput("a record is not a JSON object");
  const auto id = record.find("id");
  if (id == record.end() || !id->is_string() || id->get<std::string>().empty()) {
    return Error::InvalidInput("a record has no \"id\"");
  }
  MeasuredRun run;
  run.id = id->get<std::string>();
  const auto source = record.find("source");
  if (source != record.end() && source->is_string()) run.source = source->get<std::string>();
  const auto norm_it = record.find("norm");
  if (norm_it == record.end() || !norm_it->is_object()) {
    return Error::InvalidInput(Clip(run.id) + ": no \"norm\" object");
  }
  const nlohmann::json& norm = *norm_it;
  std::optional<std::string> model, mode;
  std::optional<bool> data_dependent, oom;
  Status statuses[] = {
      Read(norm, "model", model),
      Read(norm, "mode", mode),
      Read(norm, "value_gib", run.value_gib),
      Read(norm, "batch_size", run.batch),
      Read(norm, "grad_accum", run.grad_accum),
      Read(norm, "seq_len", run.seq_len),
      Read(norm, "prompt_tokens", run.prompt_tokens),
      Read(norm, "generated_tokens", run.generated_tokens),
      Read(norm, "data_dependent_length", data_dependent),
      Read(norm, "packing", run.packing),
      Read(norm, "weights_dtype", run.weights_dtype),
      Read(norm, "quantization", run.quantization),
      Read(norm, "trainable_dtype", run.trainable_dtype),
      Read(norm, "master_weights_fp32", run.master_weights_fp32),
      Read(norm, "optimizer", run.optimizer),
      Read(norm, "optimizer_state_dtype", run.optimizer_state_dtype),
      Read(norm, "optimizer_in_backward", run.optimizer_in_backward),
      Read(norm, "gradient_checkpointing", run.checkpointing),
      Read(norm, "activation_offload", run.activation_offload),
      Read(norm, "cpu_offload", run.cpu_offload),
      Read(norm, "loss", run.loss),
      Read(norm, "attention", run.attention),
      Read(norm, "lora_r", run.lora_r),
      Read(norm, "lora_targets", run.lora_targets),
      Read(norm, "parallelism", run.parallelism),
      Read(norm, "num_gpus", run.num_gpus),
      Read(norm, "metric", run.metric),
      Read(norm, "includes_cuda_context", run.includes_cuda_context),
      Read(norm, "per", run.per),
      Read(norm, "gpu", run.gpu),
      Read(norm, "oom", oom),
  };
  for (const Status& s : statuses) {
    if (!s.ok()) return Error::InvalidInput(Clip(run.id) + ": " + s.error().message);
  }
  if (!mode) return Error::InvalidInput(Clip(run.id) + ": norm.mode is missing");
  run.mode = *mode;
  run.model = model.value_or("");
  run.data_dependent_length = data_dependent.value_or(false);
  run.out_of_memory = oom.value_or(false);
  return run;
}

}  // namespace hubwatch
