#include "tracker/derivatives/lag.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/derivatives/upstream_files.h"

namespace hubwatch::derivatives {
namespace {

using testing::Llama3Fixed;
using testing::Llama3Upload;
using testing::ReadFixture;

// The three advised changes of F1, each with upstream's files before and after it.
struct F1 {
  std::map<std::string, std::string> v0 = Llama3Upload();
  std::map<std::string, std::string> v1, v2, v3;
  F1() {
    v1 = v0;
    v1["generation_config.json"] = ReadFixture("v2", "generation_config.json");
    v2 = v1;
    v2["config.json"] = ReadFixture("v2", "config.json");
    v3 = Llama3Fixed();
  }
  FixFacets Fix(const std::string& id, const std::string& kind, const std::string& path,
                const std::map<std::string, std::string>& before,
                const std::map<std::string, std::string>& after) const {
    UpstreamFix fix;
    fix.advisory_id = id;
    fix.kind = kind;
    fix.path = path;
    return FacetsOfFix(fix, FacetsOfFiles(before), FacetsOfFiles(after));
  }
  std::vector<FixFacets> Fixes() const {
    return {Fix("gen", "generation_config", "generation_config.json", v0, v1),
            Fix("cfg", "config", "config.json", v1, v2),
            Fix("tok", "tokenizer", "tokenizer_config.json", v2, v3),
            Fix("special", "special_tokens", "", v0, v1)};
  }
};

std::vector<LagStatus> Statuses(const std::vector<FixFacets>& fixes, const FacetSet& derivative) {
  std::vector<LagStatus> out;
  for (const FixFacets& fix : fixes) out.push_back(Classify(fix, derivative));
  return out;
}

constexpr LagStatus kFixed = LagStatus::kFixed;
constexpr LagStatus kLagging = LagStatus::kLagging;
constexpr LagStatus kDiverged = LagStatus::kDiverged;
constexpr LagStatus kNa = LagStatus::kNotApplicable;

TEST(Lag, EachFixChangesOnlyItsOwnFacet) {
  F1 f1;
  std::vector<FixFacets> fixes = f1.Fixes();
  ASSERT_EQ(fixes[0].changed.size(), 1u);
  EXPECT_TRUE(fixes[0].changed.count("generation_config.json#eos_token_id"));
  EXPECT_TRUE(fixes[1].changed.count("config.json#eos_token_id"));
  EXPECT_TRUE(fixes[2].changed.count("tokenizer_config.json#eos_token"));
  EXPECT_EQ(fixes[2].changed.size(), 1u);
  EXPECT_TRUE(fixes[3].changed.count("generation_config.json#eos_token_id"));
}

TEST(Lag, ACopyOfTheUploadLagsACopyOfTheFixIsFixed) {
  F1 f1;
  EXPECT_EQ(Statuses(f1.Fixes(), FacetsOfFiles(f1.v0)),
            (std::vector{kLagging, kLagging, kLagging, kLagging}));
  EXPECT_EQ(Statuses(f1.Fixes(), FacetsOfFiles(f1.v3)),
            (std::vector{kFixed, kFixed, kFixed, kFixed}));
  // Copied between the fixes: the first two fixes, not the third.
  EXPECT_EQ(Statuses(f1.Fixes(), FacetsOfFiles(f1.v2)),
            (std::vector{kFixed, kFixed, kLagging, kFixed}));
}

TEST(Lag, AnUploadIsNotAFix) {
  F1 f1;
  UpstreamFix upload{.advisory_id = "up", .kind = "config", .path = "config.json"};
  EXPECT_TRUE(FacetsOfFix(upload, FacetsOfFiles({}), FacetsOfFiles(f1.v0)).changed.empty());
  UpstreamFix removal{.advisory_id = "rm", .kind = "special_tokens", .path = ""};
  auto without = f1.v0;
  without.erase("generation_config.json");
  EXPECT_TRUE(FacetsOfFix(removal, FacetsOfFiles(f1.v0), FacetsOfFiles(without)).changed.empty());
}

TEST(Lag, AnAdapterShipsNoneOfTheFiles) {
  F1 f1;
  FacetSet adapter = FacetsOfFiles({});
  EXPECT_EQ(Statuses(f1.Fixes(), adapter), (std::vector{kNa, kNa, kNa, kNa}));
}

TEST(Lag, OwnTokensAreDivergedAndAMissingKeyTheFixAddedLags) {
  F1 f1;
  auto own = f1.v3;
  own["tokenizer_config.json"] = R"({"eos_token": "<|im_end|>", "bos_token": "<s>"})";
  own["generation_config.json"] = R"({"eos_token_id": 128256})";
  own["config.json"] = R"({"bos_token_id": 128000})";  // no eos_token_id at all
  EXPECT_EQ(Statuses(f1.Fixes(), FacetsOfFiles(own)),
            (std::vector{kDiverged, kDiverged, kDiverged, kDiverged}));
  // A key the fix added: absent before it, so a copy without it lags.
  UpstreamFix fix{.advisory_id = "add", .kind = "config", .path = "config.json"};
  FixFacets added = FacetsOfFix(fix, FacetsOfFiles({{"config.json", "{}"}}),
                                FacetsOfFiles({{"config.json", R"({"pad_token_id": 0})"}}));
  EXPECT_EQ(Classify(added, FacetsOfFiles({{"config.json", R"({"x": 1})"}})), kLagging);
  EXPECT_EQ(Classify(added, FacetsOfFiles({{"config.json", R"({"pad_token_id": 0})"}})), kFixed);
}

TEST(Lag, AGgufWithThePreFixIdsLagsOnWhatItCarriesOnly) {
  F1 f1;
  GgufMetadata before;
  before.special_token_ids = {{"bos", 128000}, {"eos", 128001}};
  before.special_token_text = {{"bos", "<|begin_of_text|>"}, {"eos", "<|end_of_text|>"}};
  EXPECT_EQ(Statuses(f1.Fixes(), FacetsOfGguf(before)),
            (std::vector{kNa, kLagging, kLagging, kNa}));
  GgufMetadata fixed = before;
  fixed.special_token_ids["eos"] = 128009;
  fixed.special_token_text["eos"] = "<|eot_id|>";
  EXPECT_EQ(Statuses(f1.Fixes(), FacetsOfGguf(fixed)), (std::vector{kNa, kFixed, kFixed, kNa}));
}

TEST(Lag, ATemplateChangeConcernsTheTemplateWhereverItLives) {
  UpstreamFix fix{.advisory_id = "t", .kind = "chat_template", .path = "tokenizer_config.json"};
  auto config = [](const std::string& text) {
    return FacetsOfFiles(
        {{"tokenizer_config.json", nlohmann::json({{"chat_template", text}, {"x", text}}).dump()}});
  };
  FixFacets change = FacetsOfFix(fix, config("old"), config("new"));
  ASSERT_EQ(change.changed.size(), 1u);  // "x" moved too, but it is not the template
  GgufMetadata gguf;
  gguf.chat_template = "old";
  EXPECT_EQ(Classify(change, FacetsOfGguf(gguf)), kLagging);
  EXPECT_EQ(Classify(change, FacetsOfFiles({{"chat_template.jinja", "new"}})), kFixed);
  EXPECT_EQ(Classify(change, config("mine")), kDiverged);
  EXPECT_EQ(Classify(change, FacetsOfFiles({{"config.json", "{}"}})), kNa);
}

}  // namespace
}  // namespace hubwatch::derivatives
