#pragma once

// Calibration: a published measured run estimated with that run's own settings, in the number
// it measured (torch's allocated or reserved bytes, or the card as nvidia-smi shows it), and
// compared with the measurement. Every setting comes from the run's `norm` (measured_run.h); a
// run whose settings the estimator cannot express, or whose figure the source leaves open, is
// skipped with the reason, never dropped. Nothing here is fitted to the measurements: the
// estimate is the one every user gets, with the run's settings. Pure functions; thread-safe.

#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/estimate.h"
#include "estimator/measured_run.h"

namespace hubwatch {

// The estimate input that reproduces a run's settings, and how to read its answer.
struct RunSettings {
  EstimateInput input;
  MemoryMode mode = MemoryMode::kFullFinetune;
  double ranks_summed = 1;     // the figure sums this many cards' peaks (per: sum_over_gpus)
  double cards_spanned = 1;    // cards one copy of the model is laid across (device_map)
  bool at_length_cap = false;  // the length depends on the data: estimated at its cap
};

// The run's settings over `defaults` (what the run does not set: the CUDA context, the
// allocator's fragmentation). Errors: kUnsupported with the reason (a mode, setting or length
// the estimator cannot take, or that the source leaves open).
Result<RunSettings> SettingsForRun(const MeasuredRun& run,
                                   const Assumptions& defaults = Assumptions());

struct CalibrationCase {
  std::string id, source, model, mode;  // mode as the record names it
  std::string metric;                   // allocated, reserved, card
  double measured_gib = 0;
  double estimated_gib = 0;
  double error_pct = 0;        // (estimated - measured) / measured x 100
  bool verdict_ok = true;      // the fit verdict on the run's card agrees with what happened
  bool out_of_memory = false;  // the run did not fit: only the verdict is checked
  bool at_length_cap = false;
  int64_t positions_cap = 0;  // > 0: the run's length exceeds the model's learned positions,
                              // so it read at most this many tokens per sequence
  std::string skipped;        // non-empty: not estimated, and why
};

// Whose config.json estimates `model`, in order: the model's own, then, for a quantized
// repository (a name ending -GPTQ-Int4, -GPTQ-Int8, -GPTQ, -AWQ, -Int4 or -Int8), its base model:
// the same name without the suffix in the same organisation, else in any organisation among
// `known` (the ids there are configs for: TheBloke/Mistral-7B-v0.1-GPTQ quantizes
// mistralai/Mistral-7B-v0.1). Same architecture; the run's norm names the quantization.
std::vector<std::string> ConfigCandidates(const std::string& model,
                                          const std::vector<std::string>& known);

// The released configs runs are estimated from, by model id. Not thread-safe to Add while
// another thread reads; reading alone is.
class CalibrationConfigs {
 public:
  // A second config for one id replaces the first.
  void Add(const std::string& model, nlohmann::json config);
  // The config that estimates `model` (ConfigCandidates' order, over the ids added), or null.
  // `used` (when given) gets the id read when it is not `model`'s own.
  const nlohmann::json* For(const std::string& model, std::string* used = nullptr) const;

 private:
  std::map<std::string, std::shared_ptr<const nlohmann::json>> configs_;
};

// `config`: the model's config.json, or null when there is none to read.
CalibrationCase CalibrateRun(const MeasuredRun& run, const nlohmann::json* config,
                             const Assumptions& defaults = Assumptions());

struct CalibrationRun {
  const MeasuredRun* run;
  const nlohmann::json* config;  // null: none
};

// Every run calibrated (CalibrateRun over `defaults`), in order. The one setting taken from
// another record: where a source measured the CUDA context by itself (a context_only run: the
// card after its first tensor, nothing else), its runs on that GPU whose figure holds the
// context are estimated with that context instead of runtime.cuda_context_gb's default: a
// measured fact of their machine, as a user would set it for theirs.
std::vector<CalibrationCase> CalibrateAll(const std::vector<CalibrationRun>& runs,
                                          const Assumptions& defaults = Assumptions());

struct CalibrationSummary {
  size_t cases = 0;  // estimated against a figure (out-of-memory runs are verdicts only)
  size_t skipped = 0;
  size_t false_fits = 0;      // measured out of memory, estimated to fit
  size_t wrong_verdicts = 0;  // any verdict the run contradicts (false fits included)
  double median_abs_error_pct = 0;
  double worst_abs_error_pct = 0;
  std::string worst_id;
};

CalibrationSummary Summarize(const std::vector<CalibrationCase>& cases);

// The one constant tuned to measurements, runtime.fragmentation (reserved beyond allocated),
// judged fairly: for each source, the value that fits every other source best (least median
// |error| over their reserved and card cases, on a grid of 0 to 1 by 0.05), and that source's
// cases estimated with it.
struct HeldOutSource {
  std::string source;
  double fragmentation = 0;    // tuned without this source
  CalibrationSummary summary;  // this source's cases, estimated with it
};
std::vector<HeldOutSource> HoldOutEachSource(const std::vector<CalibrationRun>& runs);

}  // namespace hubwatch
