// Every released config beside the truth files, with each integer it holds (at the top level and
// one part deep: text_config, vision_config, ...) replaced by a hostile value in turn: the
// estimate either succeeds or fails with one line, and never crashes, hangs or wraps (CI runs
// this under AddressSanitizer + UndefinedBehaviorSanitizer, which abort on overflow).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "estimator/estimate.h"
#include "tests/estimator/test_util.h"

namespace hubwatch {
namespace {

using testing::ReadFixture;

// Zero, negative, absurdly large, and near the 64-bit edge.
const std::vector<nlohmann::json> kHostile = {0, -1, 1'000'000'000, int64_t{1} << 62};

// Paths of the integer members of `config` and of its object members, one level deep.
std::vector<nlohmann::json::json_pointer> IntegerMembers(const nlohmann::json& config) {
  std::vector<nlohmann::json::json_pointer> out;
  for (auto it = config.begin(); it != config.end(); ++it) {
    const nlohmann::json::json_pointer at = nlohmann::json::json_pointer("/" + it.key());
    if (it->is_number_integer()) out.push_back(at);
    if (!it->is_object()) continue;
    for (auto part = it->begin(); part != it->end(); ++part) {
      if (part->is_number_integer()) out.push_back(at / part.key());
    }
  }
  return out;
}

TEST(HostileValues, EveryIntegerOfEveryReleasedConfigFailsCleanlyOrEstimates) {
  const std::filesystem::path models = std::filesystem::path(HUBWATCH_FIXTURES_DIR) / "models";
  int configs = 0, estimates = 0, refusals = 0;
  for (const auto& entry : std::filesystem::directory_iterator(models)) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(".config.json")) continue;
    const nlohmann::json config =
        nlohmann::json::parse(ReadFixture("models/" + file), nullptr, /*allow_exceptions=*/false);
    if (!config.is_object()) continue;  // Python's Infinity: read through the text path elsewhere
    ++configs;
    for (const nlohmann::json::json_pointer& at : IntegerMembers(config)) {
      for (const nlohmann::json& value : kHostile) {
        nlohmann::json hostile = config;
        hostile[at] = value;
        Result<Estimate> e = EstimateModel(hostile, {});
        if (e.ok()) {
          ++estimates;
          continue;
        }
        ++refusals;
        EXPECT_FALSE(e.error().message.empty()) << file << at.to_string() << "=" << value;
        EXPECT_EQ(e.error().message.find('\n'), std::string::npos) << file << at.to_string();
        EXPECT_LT(e.error().message.size(), 1000u) << file << at.to_string();
      }
    }
  }
  std::printf("%d configs: %d estimates, %d refusals\n", configs, estimates, refusals);
  EXPECT_GE(configs, 75);
  EXPECT_GT(refusals, 0);
  EXPECT_GT(estimates, 0);
}

}  // namespace
}  // namespace hubwatch
