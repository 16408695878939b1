// The estimator against published measured runs (estimator/calibration.h): how a run's `norm`
// becomes the estimate's settings, and the CI guard that keeps every estimate within its recorded
// bound of what was measured (tests/fixtures/calibration/README.md).

#include "estimator/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "estimator/measured_run.h"

namespace hubwatch {
namespace {

const std::string kFixtures = HUBWATCH_FIXTURES_DIR;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<MeasuredRun> Runs() {
  std::vector<MeasuredRun> runs;
  std::istringstream lines(Slurp(kFixtures + "/calibration/measured-memory.jsonl"));
  std::string line;
  while (std::getline(lines, line)) {
    Result<MeasuredRun> run = ParseMeasuredRun(nlohmann::json::parse(line));
    EXPECT_TRUE(run.ok()) << run.error().message;
    if (run.ok()) runs.push_back(*run);
  }
  return runs;
}

const MeasuredRun& Find(const std::vector<MeasuredRun>& runs, const std::string& id) {
  for (const MeasuredRun& r : runs) {
    if (r.id == id) return r;
  }
  ADD_FAILURE() << "no run " << id;
  static const MeasuredRun none;
  return none;
}

// The configs by model id: tests/fixtures/models/<org>__<name>.config.json.
CalibrationConfigs Configs() {
  CalibrationConfigs configs;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtures + "/models")) {
    const std::string file = entry.path().filename().string();
    const size_t sep = file.find("__"), end = file.rfind(".config.json");
    if (sep != std::string::npos && end != std::string::npos && end > sep) {
      // As the command does: a file that is not JSON (one fixture writes Infinity) is left out.
      nlohmann::json config = nlohmann::json::parse(Slurp(entry.path().string()), nullptr, false);
      if (config.is_discarded()) continue;
      configs.Add(file.substr(0, sep) + "/" + file.substr(sep + 2, end - sep - 2),
                  std::move(config));
    }
  }
  return configs;
}

// Each run with its config. REQUIRES: runs and configs outlive the result.
std::vector<CalibrationRun> Both(const std::vector<MeasuredRun>& runs,
                                 const CalibrationConfigs& configs) {
  std::vector<CalibrationRun> out;
  for (const MeasuredRun& r : runs) out.push_back({&r, configs.For(r.model)});
  return out;
}

TEST(MeasuredRun, ReadsTheNormAndRefusesWhatItCannotRead) {
  const std::vector<MeasuredRun> runs = Runs();
  EXPECT_EQ(runs.size(), 197u);
  const MeasuredRun& r = Find(runs, "fms-acceleration-bench-223");
  EXPECT_EQ(r.source, "fms-acceleration-bench");
  EXPECT_EQ(r.model, "mistralai/Mixtral-8x7B-Instruct-v0.1");
  EXPECT_EQ(r.mode, "qlora");
  EXPECT_EQ(r.batch, 2);
  EXPECT_EQ(r.seq_len, 4096);
  EXPECT_EQ(r.quantization, "nf4");
  EXPECT_EQ(r.num_gpus, 2);
  EXPECT_DOUBLE_EQ(*r.value_gib, 19.679);
  EXPECT_FALSE(r.trainable_dtype.has_value());  // the source is silent

  for (const char* bad : {R"([])", R"({"norm": {"mode": "full"}})", R"({"id": "x"})",
                          R"({"id": "x", "norm": {"mode": "full", "batch_size": "4"}})",
                          R"({"id": "x", "norm": {"mode": "full", "seq_len": 1.5}})",
                          R"({"id": "x", "norm": {"batch_size": 4}})"}) {
    EXPECT_FALSE(ParseMeasuredRun(nlohmann::json::parse(bad)).ok()) << bad;
  }
}

TEST(Calibration, ARunsSettingsBecomeTheEstimatesAssumptions) {
  const std::vector<MeasuredRun> runs = Runs();
  // fms: Mixtral QLoRA, bitsandbytes NF4, FSDP full shard over 2 A100s, checkpointed, torch's
  // allocated bytes.
  Result<RunSettings> q = SettingsForRun(Find(runs, "fms-acceleration-bench-223"));
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(q->mode, MemoryMode::kQlora);
  EXPECT_EQ(q->input.workload.batch, 2);
  EXPECT_EQ(q->input.workload.seq, 4096);
  const Assumptions& a = q->input.assumptions;
  EXPECT_EQ(a.qlora_quantization, Quantization::kNf4);
  EXPECT_FALSE(a.qlora_double_quant);  // plain "nf4": double quantization not stated
  EXPECT_EQ(a.sharding, Sharding::kZero3);
  EXPECT_EQ(a.gpus, 2);
  EXPECT_EQ(a.checkpointing, Checkpointing::kFull);
  EXPECT_EQ(a.metric, MemoryMetric::kAllocated);
  EXPECT_EQ(a.lora_rank, 16);
  EXPECT_EQ(a.lora_targets, (std::vector<std::string>{"q_proj", "k_proj", "v_proj", "o_proj"}));

  // Qwen2.5 with transformers' generate: the prompt in one prefill, then 2048 new tokens.
  Result<RunSettings> g = SettingsForRun(Find(runs, "qwen25-speed-benchmark-130"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->mode, MemoryMode::kServe);
  EXPECT_EQ(g->input.workload.context, 30720 + 2048);
  EXPECT_EQ(g->input.assumptions.prefill_tokens, 30720);
  EXPECT_EQ(g->input.assumptions.serve_quantization, Quantization::kGptqInt4);

  // PEFT MetaMathQA full fine-tune: pure bf16 (bf16 AdamW states, no master copy), reserved.
  Result<RunSettings> f = SettingsForRun(Find(runs, "peft-metamathqa-026"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->input.assumptions.master_bytes, 0);
  EXPECT_EQ(f->input.assumptions.adam_m_bytes, 2);
  EXPECT_EQ(f->input.assumptions.metric, MemoryMetric::kReserved);
  EXPECT_TRUE(f->at_length_cap);  // padded to the longest in the batch, at most 768
}

// A quantized repository is estimated from its base model's config: the same name without the
// suffix, in its own organisation first.
TEST(Calibration, AQuantizedRepositoryReadsItsBaseModelsConfig) {
  EXPECT_EQ(ConfigCandidates("TheBloke/Mistral-7B-v0.1-GPTQ",
                             {"mistralai/Mistral-7B-v0.1", "mistralai/Mixtral-8x7B-v0.1"}),
            (std::vector<std::string>{"TheBloke/Mistral-7B-v0.1-GPTQ", "TheBloke/Mistral-7B-v0.1",
                                      "mistralai/Mistral-7B-v0.1"}));
  EXPECT_EQ(ConfigCandidates("Qwen/Qwen2.5-7B-Instruct-AWQ", {}),
            (std::vector<std::string>{"Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct"}));
  EXPECT_EQ(ConfigCandidates("meta-llama/Llama-3.2-3B", {"x/Llama-3.2-3B"}),
            (std::vector<std::string>{"meta-llama/Llama-3.2-3B"}));
  const CalibrationConfigs configs = Configs();
  std::string used;
  ASSERT_NE(configs.For("TheBloke/Mistral-7B-v0.1-GPTQ", &used), nullptr);
  EXPECT_EQ(used, "mistralai/Mistral-7B-v0.1");
  used.clear();
  ASSERT_NE(configs.For("mistralai/Mistral-7B-v0.1", &used), nullptr);
  EXPECT_EQ(used, "");  // its own
  EXPECT_EQ(configs.For("nobody/nothing-AWQ"), nullptr);
}

// A run is skipped with its reason, never dropped: a value whose unit the source leaves open, a
// PEFT method other than LoRA, a figure of no step, a model without a config.
TEST(Calibration, WhatCannotBeEstimatedIsSkippedWithTheReason) {
  const std::vector<MeasuredRun> runs = Runs();
  const CalibrationConfigs configs = Configs();
  auto skipped = [&](const std::string& id) {
    const MeasuredRun& r = Find(runs, id);
    return CalibrateRun(r, configs.For(r.model)).skipped;
  };
  for (const MeasuredRun& r : runs) {
    if (!r.value_gib) {
      EXPECT_NE(skipped(r.id).find("ambiguous"), std::string::npos) << r.id;
    }
    if (r.mode == "other_peft") {
      EXPECT_NE(skipped(r.id).find("PEFT"), std::string::npos);
    }
  }
  EXPECT_NE(skipped("transformers-anatomy-249").find("no training or serving step"),
            std::string::npos);
  MeasuredRun unknown = Find(runs, "fms-acceleration-bench-197");
  unknown.model = "nobody/nothing";
  EXPECT_NE(CalibrateRun(unknown, nullptr).skipped.find("no config.json for nobody/nothing"),
            std::string::npos);
  const CalibrationCase ok = CalibrateRun(Find(runs, "fms-acceleration-bench-197"),
                                          configs.For("mistralai/Mistral-7B-v0.1"));
  EXPECT_TRUE(ok.skipped.empty()) << ok.skipped;
  EXPECT_GT(ok.estimated_gib, 0);
}

// A source that measured the CUDA context by itself (the anatomy: 1,343 MB on its V100 after
// one tensor) has its nvidia-smi runs on that GPU estimated with it; other runs keep the default.
TEST(Calibration, ASourcesOwnMeasuredContextIsTheContextOfItsRunsOnThatGpu) {
  const std::vector<MeasuredRun> runs = Runs();
  const CalibrationConfigs configs = Configs();
  const std::vector<CalibrationCase> all = CalibrateAll(Both(runs, configs));
  auto alone = [&](const std::string& id) {
    const MeasuredRun& r = Find(runs, id);
    return CalibrateRun(r, configs.For(r.model));
  };
  auto in_all = [&](const std::string& id) {
    for (const CalibrationCase& c : all) {
      if (c.id == id) return c;
    }
    ADD_FAILURE() << id;
    return CalibrationCase();
  };
  const double measured_context_gib = Find(runs, "transformers-anatomy-248").value_gib.value();
  EXPECT_NEAR(measured_context_gib, 1343.0 / 1024, 1e-3);
  const double default_context_gib = Assumptions().cuda_context_gb * 1e9 / (1 << 30);
  for (const std::string id : {"transformers-anatomy-250", "transformers-anatomy-256"}) {
    SCOPED_TRACE(id);
    EXPECT_NEAR(in_all(id).estimated_gib - alone(id).estimated_gib,
                measured_context_gib - default_context_gib, 1e-6);
  }
  // No context measured by fms-acceleration: its nvidia-smi runs keep the default.
  EXPECT_DOUBLE_EQ(in_all("fms-acceleration-bench-190").estimated_gib,
                   alone("fms-acceleration-bench-190").estimated_gib);
}

// The CI guard. tests/fixtures/calibration/guard.json records, for every run estimated when it
// was written, a bound on |error|: 10%, or the error achieved then where larger (rounded up to a
// whole percent). Each estimate must stay within its bound; a run estimated then must still be;
// and a bound far above what is achieved now must be ratcheted down
// (tests/calibration/ratchet.py rewrites the file).
TEST(Calibration, EveryEstimateStaysWithinItsRecordedBoundOfWhatWasMeasured) {
  const nlohmann::json guard = nlohmann::json::parse(Slurp(kFixtures + "/calibration/guard.json"));
  const double floor_pct = guard.at("floor_pct").get<double>();
  const double slack_pct = guard.at("ratchet_slack_pct").get<double>();
  const std::vector<MeasuredRun> runs = Runs();
  const CalibrationConfigs configs = Configs();
  std::map<std::string, CalibrationCase> now;
  for (CalibrationCase& c : CalibrateAll(Both(runs, configs))) now[c.id] = std::move(c);
  size_t checked = 0;
  for (const auto& [id, entry] : guard.at("bounds").items()) {
    SCOPED_TRACE(id);
    ASSERT_TRUE(now.count(id));
    const CalibrationCase& c = now[id];
    ASSERT_TRUE(c.skipped.empty())
        << "estimated when the guard was written, skipped now: " << c.skipped;
    const double bound = entry.get<double>();
    const double error = std::fabs(c.error_pct);
    EXPECT_LE(error, bound) << "estimated " << c.estimated_gib << " GiB, measured "
                            << c.measured_gib << " GiB";
    EXPECT_FALSE(bound > floor_pct && error + slack_pct < bound)
        << "the bound " << bound << "% is far above the error now achieved (" << error
        << "%): ratchet it down (tests/calibration/ratchet.py)";
    EXPECT_TRUE(c.verdict_ok) << "a run that finished would be called 'does not fit'";
    ++checked;
  }
  // Every run estimated now is under the guard.
  for (const auto& [id, c] : now) {
    if (c.skipped.empty()) {
      EXPECT_TRUE(guard.at("bounds").contains(id)) << id << " is unguarded";
    }
  }
  EXPECT_GE(checked, 100u);
}

}  // namespace
}  // namespace hubwatch
