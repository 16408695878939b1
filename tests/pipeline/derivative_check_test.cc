// Derivative rounds against fakehub's derivative fixtures (tests/fixtures/hub-derivatives), on
// the replay clock: each derivative's status per upstream fix, the lagging ones' advisories, and
// a derivative that later copies the fix moving to fixed, its advisory saying so.

#include <gtest/gtest.h>

#include <set>

#include "tests/pipeline/derivative_env.h"
#include "tracker/pipeline/derivative_round.h"

namespace hubwatch::pipeline {
namespace {

using derivatives::LagStatus;

constexpr char kUpstream[] = "meta-llama/Meta-Llama-3-8B-Instruct";
constexpr char kPreFix[] = "aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT";
constexpr char kFixed[] = "tidewater-ml/Llama-3-8B-Instruct-Tidewater";
constexpr char kCatchUp[] = "larkspur-nlp/Llama-3-8B-Instruct-Larkspur-DPO";
constexpr char kAdapter[] = "pinegrove-research/llama-3-8b-instruct-sql-lora";
constexpr char kGguf[] = "fernhollow-quants/Meta-Llama-3-8B-Instruct-GGUF";
constexpr char kMerge[] = "copperleaf-merges/Llama-3-8B-Instruct-Base-SLERP";

int64_t At(const char* iso) { return *fakehub::ParseIsoTime(iso); }

class DerivativeCheckTest : public PipelineTest {
 protected:
  void SetUp() override {
    fixtures_dirs_ = {std::string(HUBWATCH_FIXTURES_DIR) + "/hub-derivatives"};
    // After upstream's three EOS fixes and the larkspur copy of the upload; before larkspur
    // syncs the fix (04-26) and before the merge (05-10).
    replay_start_ = At("2024-04-25T00:00:00Z");
    PipelineTest::SetUp();
    Track(kUpstream);
    PollOnce(kUpstream);
  }

  // One round, prepared, classified and recorded by the pipeline's steps (as the daemon's
  // DerivativeWatch runs them); returns the statuses of the derivatives read at a new head.
  std::map<std::string, std::multiset<LagStatus>> RoundAndRecord(DerivativeRound* out = nullptr) {
    DerivativeRoundSettings settings;
    settings.relations = {derivatives::Relation::kFinetune, derivatives::Relation::kAdapter,
                          derivatives::Relation::kQuantized, derivatives::Relation::kMerge};
    Result<PreparedDerivativeRound> prepared =
        PrepareDerivativeRound(*store_, kUpstream, settings);
    EXPECT_TRUE(prepared.ok()) << prepared.error().message;
    if (!prepared.ok()) return {};
    DerivativeRound round = RunDerivativeRound(io_, stack_->client(), prepared->input);
    EXPECT_FALSE(round.listing_error);
    std::set<std::string> read;
    for (const DerivativeRead& r : round.reads) {
      EXPECT_TRUE(r.facets) << r.id << ": " << r.error;
      read.insert(r.id);
    }
    const ClassifiedDerivativeRound classified = ClassifyDerivativeRound(*prepared, round, now_);
    Status recorded = RecordDerivativeRound(*store_, kUpstream, classified, now_, {});
    EXPECT_TRUE(recorded.ok()) << recorded.error().message;
    std::map<std::string, std::multiset<LagStatus>> statuses;
    for (const derivatives::DerivativeCheck& check : classified.checks) {
      if (!read.count(check.id)) continue;
      for (const derivatives::AdvisoryLag& lag : check.lags) statuses[check.id].insert(lag.status);
    }
    if (out) *out = std::move(round);
    return statuses;
  }

  std::vector<store::AdvisoryRecord> AdvisoriesOf(const std::string& derivative) {
    return Advisories(derivative);
  }
};

bool All(const std::multiset<LagStatus>& statuses, LagStatus status) {
  return !statuses.empty() && statuses.count(status) == statuses.size();
}

TEST_F(DerivativeCheckTest, EachDerivativeGetsItsStatusPerUpstreamFix) {
  Result<std::vector<derivatives::FixFacets>> fixes = LoadFixFacets(*store_, kUpstream);
  ASSERT_TRUE(fixes.ok()) << fixes.error().message;
  std::set<std::string> facets;
  for (const derivatives::FixFacets& fix : *fixes) {
    for (const auto& [facet, change] : fix.changed) facets.insert(facet);
  }
  EXPECT_EQ(facets, (std::set<std::string>{"config.json#eos_token_id",
                                           "generation_config.json#eos_token_id",
                                           "tokenizer_config.json#eos_token"}));

  DerivativeRound round;
  auto statuses = RoundAndRecord(&round);
  EXPECT_EQ(round.listed, (std::vector<std::string>{kPreFix, kGguf, kCatchUp, kFixed}));
  EXPECT_TRUE(All(statuses[kPreFix], LagStatus::kLagging));
  EXPECT_TRUE(All(statuses[kCatchUp], LagStatus::kLagging));
  EXPECT_TRUE(All(statuses[kFixed], LagStatus::kFixed));
  // The GGUF carries the pre-fix EOS id and string; it cannot say anything of
  // generation_config.json (llama.cpp's converter never reads it).
  EXPECT_EQ(statuses[kGguf].count(LagStatus::kFixed), 0u);
  EXPECT_GE(statuses[kGguf].count(LagStatus::kLagging), 2u);
  EXPECT_GE(statuses[kGguf].count(LagStatus::kNotApplicable), 1u);
  for (const DerivativeRead& read : round.reads) {
    if (read.id == kGguf) {
      EXPECT_EQ(read.source.rfind("gguf:", 0), 0u) << read.source;
    }
  }

  // Each lagging derivative has one advisory per fix it lags on; the others have none.
  EXPECT_EQ(AdvisoriesOf(kPreFix).size(), statuses[kPreFix].size());
  EXPECT_EQ(AdvisoriesOf(kGguf).size(), statuses[kGguf].count(LagStatus::kLagging));
  EXPECT_TRUE(AdvisoriesOf(kFixed).empty());
  for (const store::AdvisoryRecord& a : AdvisoriesOf(kPreFix)) {
    EXPECT_EQ(a.osv["database_specific"]["status"], "lagging") << a.osv.dump();
    ASSERT_TRUE(a.osv.contains("related"));
  }
}

TEST_F(DerivativeCheckTest, ADerivativeThatCopiesTheFixMovesToFixedAndItsAdvisorySaysSo) {
  RoundAndRecord();
  const std::vector<store::AdvisoryRecord> before = AdvisoriesOf(kCatchUp);
  ASSERT_FALSE(before.empty());

  fakehub_->AdvanceReplayClock(
      std::chrono::seconds(At("2024-05-11T00:00:00Z") - At("2024-04-25T00:00:00Z")));
  DerivativeRound round;
  auto statuses = RoundAndRecord(&round);
  // Only what moved is read: larkspur's new head, the new adapter and the new merge.
  std::set<std::string> read;
  for (const DerivativeRead& r : round.reads) read.insert(r.id);
  EXPECT_EQ(read, (std::set<std::string>{kCatchUp, kAdapter, kMerge}));
  EXPECT_EQ(round.unchanged.size(), 3u);
  EXPECT_TRUE(All(statuses[kAdapter], LagStatus::kNotApplicable));
  EXPECT_TRUE(AdvisoriesOf(kAdapter).empty());
  EXPECT_TRUE(All(statuses[kCatchUp], LagStatus::kFixed));
  EXPECT_TRUE(All(statuses[kMerge], LagStatus::kFixed));

  const std::vector<store::AdvisoryRecord> after = AdvisoriesOf(kCatchUp);
  ASSERT_EQ(after.size(), before.size());  // updated, not published again
  std::string new_head;
  for (const DerivativeRead& r : round.reads) {
    if (r.id == kCatchUp) new_head = r.head;
  }
  for (const store::AdvisoryRecord& a : after) {
    EXPECT_EQ(a.osv["database_specific"]["status"], "fixed") << a.osv.dump();
    EXPECT_NE(a.osv["affected"].dump().find(new_head), std::string::npos) << a.osv.dump();
  }
}

TEST_F(DerivativeCheckTest, AGgufWhoseMetadataRunsPastTheCapIsAnErrorNotADownload) {
  hub::HubClientOptions options = ClientOptions();
  options.max_gguf_metadata_bytes = 1 << 20;  // the fixture's metadata takes ~7 MB
  hub::HubStack small(io_, options);
  DerivativeRound round = RunDerivativeRound(io_, small.client(), kUpstream, 200, {});
  bool seen = false;
  for (const DerivativeRead& read : round.reads) {
    if (read.id != kGguf) continue;
    seen = true;
    EXPECT_FALSE(read.facets);
    EXPECT_NE(read.error.find("needs more than 1048576 bytes"), std::string::npos) << read.error;
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace hubwatch::pipeline
