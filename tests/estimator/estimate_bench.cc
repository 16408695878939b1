// Estimates per second for gemma-2-9b-it (target: >= 100,000/s) and a parsed Llama config (issue
// 29: >= 50,000/s), the largest composite (Llama 4 Maverick: < 5 ms), and the time of an estimate
// from a checkpoint's tensors for an architecture that is not modelled (the largest: DeepSeek-V3's
// 92,000-tensor header). Method in BENCHMARKS.md.

#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "estimator/estimate.h"
#include "estimator/report.h"
#include "tests/estimator/llama4_config.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

const std::string& ConfigText() {
  static const std::string text =
      testing::ReadFixture(testing::ModelConfigPath("google/gemma-2-9b-it"));
  return text;
}

// The whole estimate from a parsed config: graph, counts, KV, four memory plans, fit and cost on
// all ten cards (with block splits where needed), lints.
void BM_EstimateParsedConfig(benchmark::State& state) {
  const nlohmann::json config = nlohmann::json::parse(ConfigText());
  const EstimateInput input;
  for (auto _ : state) {
    Result<Estimate> e = EstimateModel(config, input);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateParsedConfig);

// The same from config.json text (JSON parse included), as the pipeline sees a new revision.
void BM_EstimateFromText(benchmark::State& state) {
  const EstimateInput input;
  for (auto _ : state) {
    Result<Estimate> e = EstimateModelFromText(ConfigText(), input);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateFromText);

// Estimate plus its JSON form, what the store keeps per revision.
void BM_EstimateToJson(benchmark::State& state) {
  const EstimateInput input;
  for (auto _ : state) {
    Result<Estimate> e = EstimateModelFromText(ConfigText(), input);
    std::string json = EstimateToJson(*e).dump();
    benchmark::DoNotOptimize(json);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateToJson);

// The issue-29 floor: a parsed Llama-3-8B config.
void BM_EstimateParsedLlama(benchmark::State& state) {
  const nlohmann::json config = nlohmann::json::parse(
      testing::ReadFixture(testing::ModelConfigPath("meta-llama/Meta-Llama-3-8B")));
  const EstimateInput input;
  for (auto _ : state) {
    Result<Estimate> e = EstimateModel(config, input);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateParsedLlama);

// The largest composite (issue 29: < 5 ms): Llama 4 Maverick, its vision tower, projector and
// 48-layer decoder with 128 experts in every second layer.
void BM_EstimateLlama4Maverick(benchmark::State& state) {
  const nlohmann::json config = testing::Llama4Config(true);
  const EstimateInput input;
  for (auto _ : state) {
    Result<Estimate> e = EstimateModel(config, input);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateLlama4Maverick)->Unit(benchmark::kMillisecond);

// An architecture nobody models, from its checkpoint's tensors: the header written from the
// modelled graph of `repo`, its config relabelled.
void EstimateFromCheckpoint(benchmark::State& state, const char* repo) {
  nlohmann::json config =
      nlohmann::json::parse(testing::ReadFixture(testing::ModelConfigPath(repo)));
  Result<ModelGraph> modelled = BuildModelGraph(config);
  EstimateInput input;
  input.headers = {testing::HeaderOf(*modelled)};
  config["model_type"] = "not_modelled";
  for (auto _ : state) {
    Result<Estimate> e = EstimateModel(config, input);
    benchmark::DoNotOptimize(e);
  }
  state.counters["tensors"] = static_cast<double>(input.headers[0].tensors.size());
  state.SetItemsProcessed(state.iterations());
}
void BM_EstimateFromCheckpointLlama(benchmark::State& state) {
  EstimateFromCheckpoint(state, "meta-llama/Meta-Llama-3-8B");
}
BENCHMARK(BM_EstimateFromCheckpointLlama)->Unit(benchmark::kMillisecond);
void BM_EstimateFromCheckpointDeepseekV3(benchmark::State& state) {
  EstimateFromCheckpoint(state, "deepseek-ai/DeepSeek-V3");
}
BENCHMARK(BM_EstimateFromCheckpointDeepseekV3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hubwatch

BENCHMARK_MAIN();
