// Estimates per second for gemma-2-9b-it (target: >= 100,000/s). Method in BENCHMARKS.md.

#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "estimator/estimate.h"
#include "estimator/report.h"
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

}  // namespace
}  // namespace hubwatch

BENCHMARK_MAIN();
