// What a derivative round costs against fakehub: 200 fine-tunes of a tracked repo, read once at
// their heads, then a round where nothing moved (the listing only).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/pipeline/derivative_env.h"

namespace hubwatch::pipeline {
namespace {

constexpr char kUpstream[] = "meta-llama/Meta-Llama-3-8B-Instruct";
constexpr int kDerivatives = 200;

std::string Upload(const std::string& name) {
  std::ifstream in(std::string(HUBWATCH_FIXTURES_DIR) +
                   "/hub/meta-llama/Meta-Llama-3-8B-Instruct/files/v1/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class DerivativeCostTest : public PipelineTest {
 protected:
  void SetUp() override {
    for (int i = 0; i < kDerivatives; ++i) {
      fakehub::Repo meta;
      meta.id = "ft-org-" + std::to_string(i % 20) + "/llama-3-8b-ft-" + std::to_string(i);
      meta.created_at = "2024-05-01T00:00:00.000Z";
      meta.library_name = "transformers";
      meta.tags = {"transformers", std::string("base_model:") + kUpstream,
                   std::string("base_model:finetune:") + kUpstream};
      fakehub::RepoBuilder builder(std::move(meta));
      char date[32];
      std::snprintf(date, sizeof date, "2024-05-%02dT%02d:%02d:00.000Z", 1 + i / 60, (i / 60) % 24,
                    i % 60);
      ASSERT_TRUE(
          builder
              .AddCommit({.title = "Upload",
                          .authors = {"someone"},
                          .date = date,
                          .add = {{"config.json", fakehub::MakeInlineBlob(Upload("config.json"))},
                                  {"tokenizer_config.json",
                                   fakehub::MakeInlineBlob(Upload("tokenizer_config.json"))},
                                  {"README.md", fakehub::MakeInlineBlob("# ft\n")}}})
              .ok());
      extra_repos_.push_back(std::move(builder).Build());
    }
    PipelineTest::SetUp();
  }

  DerivativeRound Round(std::map<std::string, std::string> checked_heads) {
    return RunDerivativeRound(io_, stack_->client(), kUpstream, kDerivatives,
                              std::move(checked_heads));
  }
};

TEST_F(DerivativeCostTest, AnUnchangedRoundCostsTheListingOnly) {
  Track(kUpstream);
  PollOnce(kUpstream);
  Result<std::vector<derivatives::FixFacets>> fixes = LoadFixFacets(*store_, kUpstream);
  ASSERT_TRUE(fixes.ok()) << fixes.error().message;
  ASSERT_FALSE(fixes->empty());

  DerivativeRound first = Round({});
  ASSERT_FALSE(first.listing_error) << first.listing_error->ToString();
  ASSERT_EQ(first.reads.size(), static_cast<size_t>(kDerivatives));
  std::map<std::string, std::string> heads;
  for (const DerivativeRead& read : first.reads) {
    ASSERT_TRUE(read.facets) << read.id << ": " << read.error;
    EXPECT_EQ(read.source, "files");
    heads[read.id] = read.head;
    // A copy of the upload's config.json and tokenizer_config.json lags on their fixes.
    for (const derivatives::AdvisoryLag& lag : LagsOf(*fixes, *read.facets)) {
      EXPECT_NE(lag.status, derivatives::LagStatus::kFixed) << read.id << " " << lag.advisory_id;
    }
  }
  // Two files each, through the Hub's redirect to its resolve cache, and four listings.
  EXPECT_LE(first.requests, 4 + kDerivatives * 2 * 2);
  RecordProperty("first_round_requests", std::to_string(first.requests));

  DerivativeRound second = Round(heads);
  EXPECT_TRUE(second.reads.empty());
  EXPECT_EQ(second.unchanged.size(), static_cast<size_t>(kDerivatives));
  EXPECT_EQ(second.requests, 4);  // one listing page per relation: 0.02 requests a derivative
  RecordProperty("requests_per_unchanged_derivative",
                 std::to_string(static_cast<double>(second.requests) / kDerivatives));
}

}  // namespace
}  // namespace hubwatch::pipeline
