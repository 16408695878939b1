// libFuzzer target: config.json text into the estimator (EstimateModelFromText, the path the
// CLI, the pipeline and POST /api/v1/plan take), then every rendering of the result. Invariants
// when it estimates: the parameter parts sum to the total, active <= total, memory figures are
// finite and non-negative with consistent prefix sums, one fit per card, and the JSON / text /
// Markdown renderings succeed; the JSON and every error message stay small whatever the input
// lists, and messages are valid UTF-8.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "estimator/estimate.h"
#include "estimator/report.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const hubwatch::EstimateInput input;
  hubwatch::Result<hubwatch::Estimate> estimate = hubwatch::EstimateModelFromText(text, input);
  if (!estimate.ok()) {
    const std::string& message = estimate.error().message;
    FUZZ_CHECK(!message.empty(), "error without a message");
    FUZZ_CHECK(message.size() < 4096, "error message not bounded");
    bool utf8 = true;
    try {
      (void)nlohmann::json(message).dump();
    } catch (const nlohmann::json::exception&) {
      utf8 = false;
    }
    FUZZ_CHECK(utf8, "error message is not valid UTF-8 (it could not be stored or logged)");
    return 0;
  }
  const hubwatch::ParamCounts& p = estimate->params;
  FUZZ_CHECK(p.embedding + p.attention + p.mlp + p.norm + p.head == p.total,
             "parameter parts do not sum to the total");
  FUZZ_CHECK(p.active <= p.total, "more active than total parameters");
  for (const hubwatch::MemoryPlan& plan : estimate->memory) {
    for (double v :
         {plan.fixed_bytes, plan.per_sample_bytes, plan.per_card_fixed, plan.per_card_per_sample}) {
      FUZZ_CHECK(std::isfinite(v) && v >= 0, "memory figure negative or not finite");
    }
    FUZZ_CHECK(plan.cumulative_fixed.size() == plan.units.size() + 1 &&
                   plan.cumulative_per_sample.size() == plan.units.size() + 1,
               "prefix sums do not cover the units");
  }
  for (const hubwatch::CardFit& fit : estimate->fit) {
    FUZZ_CHECK(fit.modes.size() == estimate->memory.size(), "one fit per memory plan");
  }
  const nlohmann::json j = hubwatch::EstimateToJson(*estimate);
  FUZZ_CHECK(j.is_object(), "estimate JSON is not an object");
  const std::string dumped = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  FUZZ_CHECK(nlohmann::json::parse(dumped) == j, "estimate JSON does not round-trip");
  // Lists the config decides are aggregated or capped: the largest real model is about 70 KB.
  FUZZ_CHECK(dumped.size() < (256u << 10), "estimate JSON not bounded");
  FUZZ_CHECK(!hubwatch::RenderText(*estimate).empty(), "empty text report");
  FUZZ_CHECK(!hubwatch::RenderMarkdown(*estimate).empty(), "empty Markdown report");
  return 0;
}
