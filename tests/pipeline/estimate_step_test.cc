// The estimate step: every revision with a config.json gets an estimate row, the real one or
// the unavailable form saying why; what it stores is bounded; stored JSON of any shape is read
// without throwing.

#include "tracker/pipeline/estimate_step.h"

#include <gtest/gtest.h>

#include "estimator/report.h"
#include "tests/estimator/test_util.h"
#include "tests/fakehub/repo_model.h"
#include "tests/pipeline/pipeline_env.h"

namespace hubwatch::pipeline {
namespace {

using hubwatch::testing::ConfigWithEosIds;
using hubwatch::testing::ReadFixture;

Snapshot WithConfig(std::string config) {
  Snapshot s;
  s.sha = std::string(40, 'a');
  s.files["config.json"] = std::move(config);
  return s;
}

TEST(EstimateStep, AMillionTokenIdsStoreOneSmallEstimate) {
  const EstimateOutcome out = EstimateSnapshot("acme/ids", WithConfig(ConfigWithEosIds(1'400'000)));
  ASSERT_TRUE(out.record);
  EXPECT_TRUE(out.skipped_because.empty()) << out.skipped_because;
  EXPECT_FALSE(out.record->UnavailableReason());
  EXPECT_EQ(out.record->params_total, 8030261248u);
  EXPECT_EQ(out.record->estimate["lints"].size(), 1u);
  EXPECT_LT(out.record->estimate.dump().size(), 64u << 10);
}

// A format the estimator does not model still gets a row: the reason, not silence.
TEST(EstimateStep, AConfigTheEstimatorCannotReadIsRecordedUnavailableWithTheReason) {
  for (const char* config : {R"({"model_type": "mamba", "vocab_size": 5})", "{\"model_type\": "}) {
    SCOPED_TRACE(config);
    const EstimateOutcome out = EstimateSnapshot("acme/odd", WithConfig(config));
    ASSERT_TRUE(out.record);
    EXPECT_FALSE(out.skipped_because.empty());
    const std::optional<std::string> why = out.record->UnavailableReason();
    ASSERT_TRUE(why);
    EXPECT_EQ(*why, out.skipped_because);
    EXPECT_EQ(out.record->estimate["schema"], store::kUnavailableEstimateSchema);
    EXPECT_EQ(out.record->params_total, 0u);
  }
  EXPECT_NE(EstimateSnapshot("acme/odd", WithConfig(R"({"model_type": "rwkv"})"))
                .skipped_because.find("unsupported architecture: model_type \"rwkv\""),
            std::string::npos);
  // No config.json and no checkpoint: nothing to record.
  EXPECT_FALSE(EstimateSnapshot("acme/none", Snapshot{}).record);
}

// An architecture nobody models, or no config.json at all, but safetensors headers: an estimate
// from the checkpoint's tensors, exact in its counts, marked as such (issue 29).
TEST(EstimateStep, AnUnmodelledArchitectureIsEstimatedFromItsCheckpoint) {
  Result<SafetensorsHeader> header =
      ParseSafetensorsHeader(ReadFixture("safetensors/gpt2.header.json"));
  ASSERT_TRUE(header.ok());
  nlohmann::json config =
      nlohmann::json::parse(ReadFixture("models/openai-community__gpt2.config.json"));
  config["model_type"] = "gpt2_remote_code";
  nlohmann::json absurd = nlohmann::json::parse(ReadFixture("models/openai-community__gpt2.config.json"));
  absurd["n_layer"] = 1e9;
  // An unmodelled config, none, and one the estimator refuses: the tensors speak for all three.
  for (const std::optional<std::string>& text :
       {std::optional<std::string>(config.dump()), std::optional<std::string>(),
        std::optional<std::string>(absurd.dump())}) {
    SCOPED_TRACE(text.value_or("no config.json"));
    Snapshot s = text ? WithConfig(*text) : Snapshot{};
    s.sha = std::string(40, 'b');
    diff::ManifestEntry weights;
    weights.path = "model.safetensors";
    weights.git_oid = std::string(40, 'c');
    weights.lfs_sha256 = std::string(64, 'd');
    s.manifest.push_back(weights);
    s.headers[*weights.lfs_sha256] = *header;
    const EstimateOutcome out = EstimateSnapshot("acme/custom", s);
    ASSERT_TRUE(out.record);
    EXPECT_TRUE(out.skipped_because.empty()) << out.skipped_because;
    EXPECT_EQ(out.record->params_total, 124439808u);
    EXPECT_EQ(out.record->estimate["model"]["source"], "checkpoint_tensors");
    EXPECT_EQ(out.record->estimate["params"]["on_disk"], 137022720u);
    const std::string notes = out.record->estimate["notes"].dump();
    EXPECT_EQ(notes.find("config.json was refused (n_layer 1000000000 is absurd") !=
                  std::string::npos,
              text == absurd.dump())
        << notes;
  }
}

TEST(EstimateStep, AnEstimateOverTheSizeCapIsRecordedUnavailable) {
  const std::string gpt2 = ReadFixture("models/openai-community__gpt2.config.json");
  const EstimateOutcome full = EstimateSnapshot("acme/gpt2", WithConfig(gpt2));
  ASSERT_TRUE(full.record && !full.record->UnavailableReason());
  const size_t bytes = full.record->estimate.dump().size();
  const EstimateOutcome capped = EstimateSnapshot("acme/gpt2", WithConfig(gpt2), bytes - 1);
  ASSERT_TRUE(capped.record);
  const std::optional<std::string> why = capped.record->UnavailableReason();
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "the estimate is " + std::to_string(bytes) + " bytes of JSON, over the " +
                      std::to_string(bytes - 1) + " the store keeps");
  EXPECT_LT(capped.record->estimate.dump().size(), 200u);
}

TEST(EstimateStep, NoEstimateChangeAgainstTheUnavailableForm) {
  const EstimateOutcome real = EstimateSnapshot(
      "acme/gpt2", WithConfig(ReadFixture("models/openai-community__gpt2.config.json")));
  const EstimateOutcome none =
      EstimateSnapshot("acme/gpt2", WithConfig(R"({"model_type": "mamba"})"));
  ASSERT_TRUE(real.record && none.record);
  EXPECT_FALSE(EstimateChange(none.record->estimate, real.record->estimate));
  EXPECT_FALSE(EstimateChange(real.record->estimate, none.record->estimate));
  EXPECT_FALSE(EstimateChange(real.record->estimate, real.record->estimate));
}

// A stored estimate is read back as whatever JSON the row holds; none of it may throw.
TEST(EstimateStep, KeyFiguresOfMalformedEstimatesAreNullNotExceptions) {
  for (const char* stored : {R"({"schema": "hubwatch.estimate/1", "params": 5, "kv_cache": [],
            "memory": [1, {"fixed_bytes": "x", "mode": 3}], "fit": [7, {"modes": 3},
            {"card": "t4", "modes": {"serve": 4}}], "checkpoint": {"parameter_delta": "x"}})",
                             "[]", "null", R"({"memory": {}, "fit": "x"})"}) {
    SCOPED_TRACE(stored);
    const nlohmann::json j = nlohmann::json::parse(stored);
    nlohmann::json k;
    EXPECT_NO_THROW(k = KeyFigures(j));
    EXPECT_NO_THROW(EstimateChange(j, j));
  }
  const nlohmann::json k = KeyFigures(
      nlohmann::json::parse(R"({"params": 5, "fit": [{"card": "t4", "modes": {"serve": 4}}]})"));
  EXPECT_TRUE(k["params.total"].is_null());
  EXPECT_TRUE(k["fit.t4.serve.verdict"].is_null());
}

// phi-2's history: a pre-2024 phi-msft config, then one the estimator does not model. Both
// revisions ingest; the first has its exact estimate, the second the reason it has none.
const std::string kPhi = "acme/phi-history";

fakehub::Repo PhiHistory() {
  fakehub::Repo meta;
  meta.id = kPhi;
  meta.created_at = "2023-12-01T00:00:00.000Z";
  fakehub::RepoBuilder b(std::move(meta));
  fakehub::RepoBuilder::CommitSpec msft;
  msft.title = "phi-msft config";
  msft.date = "2023-12-02T00:00:00.000Z";
  msft.add = {{"config.json", fakehub::MakeInlineBlob(
                                  ReadFixture("models/microsoft__phi-2.phi-msft.config.json"))}};
  EXPECT_TRUE(b.AddCommit(std::move(msft)).ok());
  fakehub::RepoBuilder::CommitSpec other;
  other.title = "a format nobody models";
  other.date = "2023-12-03T00:00:00.000Z";
  other.change = {{"config.json", fakehub::MakeInlineBlob(R"({"model_type": "phi-next"})")}};
  EXPECT_TRUE(b.AddCommit(std::move(other)).ok());
  return std::move(b).Build();
}

class EstimateStepPipelineTest : public PipelineTest {
 protected:
  void SetUp() override {
    extra_repos_.push_back(PhiHistory());
    PipelineTest::SetUp();
  }
};

TEST_F(EstimateStepPipelineTest, AnUnmodelledRevisionIngestsWithItsEstimateUnavailable) {
  Track(kPhi);
  const PollReport r = PollOnce(kPhi);
  ASSERT_TRUE(r.ok) << r.error;
  const std::vector<store::RevisionRecord> revs = Revisions(kPhi);
  ASSERT_EQ(revs.size(), 2u);
  auto first = store_->revisions().GetEstimate(kPhi, revs[1].sha);
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->params_total, 2779683840u);
  EXPECT_FALSE((*first)->UnavailableReason());

  auto second = store_->revisions().GetEstimate(kPhi, revs[0].sha);
  ASSERT_TRUE(second.ok() && second->has_value());
  const std::optional<std::string> why = (*second)->UnavailableReason();
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("unsupported architecture: model_type \"phi-next\""), std::string::npos)
      << *why;
  auto latest = store_->revisions().LatestEstimate(kPhi);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->sha, revs[0].sha);
  for (const store::ChangeRecord& c : Changes(kPhi)) {
    EXPECT_NE(c.change.kind, diff::ChangeKind::kEstimate) << c.change.summary;
  }
}

}  // namespace
}  // namespace hubwatch::pipeline
