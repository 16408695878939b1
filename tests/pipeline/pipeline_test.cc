#include <gtest/gtest.h>

#include <algorithm>

#include "tests/pipeline/pipeline_env.h"

namespace hubwatch::pipeline {
namespace {

bool Has(const std::vector<store::ChangeRecord>& changes, diff::ChangeKind kind,
         const std::string& needle = "") {
  for (const store::ChangeRecord& c : changes) {
    if (c.change.kind == kind && c.change.summary.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST_F(PipelineTest, IngestsHistoryOldestFirstThenCostsOneRequest) {
  Track("meta-llama/Meta-Llama-3-8B-Instruct");
  const PollReport first = PollOnce("meta-llama/Meta-Llama-3-8B-Instruct");
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_TRUE(first.head_moved);
  EXPECT_GE(first.revisions, 4);
  const auto revs = Revisions("meta-llama/Meta-Llama-3-8B-Instruct");
  ASSERT_EQ(revs.size(), static_cast<size_t>(first.revisions));
  // Newest first in the listing; each revision's parent is the one before it.
  for (size_t i = 0; i + 1 < revs.size(); ++i) {
    EXPECT_EQ(revs[i].parents, std::vector<std::string>{revs[i + 1].sha});
  }

  // Nothing moved: one request (the refs), nothing ingested.
  const PollReport second = PollOnce("meta-llama/Meta-Llama-3-8B-Instruct");
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_FALSE(second.head_moved);
  EXPECT_EQ(second.revisions, 0);
  EXPECT_EQ(second.stats.requests, 1);
}

// With hub_info_interval_s, a good poll reads the model info (downloads, likes, tags) when the
// stored one is missing or a day old: one more request then, none in between.
TEST_F(PipelineTest, AGoodPollReadsTheHubsCountsAboutOnceADay) {
  const std::string repo = "google/gemma-2-9b-it";
  Track(repo);
  PollerOptions options;
  options.hub_info_interval_s = 86400;
  const PollReport first = PollOnce(repo, options);
  ASSERT_TRUE(first.ok) << first.error;
  auto record = store_->repos().GetRepo(repo);
  ASSERT_TRUE(record.ok() && record->has_value());
  const store::HubInfo& info = (*record)->hub_info;
  EXPECT_EQ(info.downloads, 187342);  // tests/fixtures/hub/google/gemma-2-9b-it/repo.json
  EXPECT_EQ(info.likes, 741);
  EXPECT_NE(std::find(info.tags.begin(), info.tags.end(), "gemma2"), info.tags.end());
  EXPECT_EQ(info.fetched_at, now_);

  now_ += 3600;
  EXPECT_EQ(PollOnce(repo, options).stats.requests, 1);  // the refs only
  now_ += 86400;
  const PollReport daily = PollOnce(repo, options);
  EXPECT_EQ(daily.stats.requests, 2);  // the refs and the model info
  record = store_->repos().GetRepo(repo);
  ASSERT_TRUE(record.ok() && record->has_value());
  EXPECT_EQ((*record)->hub_info.fetched_at, now_);
  EXPECT_EQ((*record)->hub_info.downloads, 187342);
  // Off (the default): never read.
  now_ += 2 * 86400;
  EXPECT_EQ(PollOnce(repo).stats.requests, 1);
}

// An unchanged poll hands its poll times to write_soon (no durable write waits for it); a poll
// that ingested, or that failed, records its state through the normal path.
TEST_F(PipelineTest, OnlyAnUnchangedPollLeavesItsPollTimesToWriteSoon) {
  const std::string repo = "meta-llama/Meta-Llama-3-8B-Instruct";
  Track(repo);
  std::vector<std::function<Status()>> soon;
  PollerOptions options;
  options.write_soon = [&](std::function<Status()> work) { soon.push_back(std::move(work)); };
  now_ = 1000;
  ASSERT_TRUE(PollOnce(repo, options).ok);  // ingests: recorded at once
  EXPECT_TRUE(soon.empty());
  Result<std::optional<store::RepoRecord>> stored = store_->repos().GetRepo(repo);
  ASSERT_TRUE(stored.ok() && *stored);
  EXPECT_EQ((*stored)->last_polled_at, 1000);

  now_ = 2000;
  const PollReport unchanged = PollOnce(repo, options);
  ASSERT_TRUE(unchanged.ok) << unchanged.error;
  EXPECT_FALSE(unchanged.head_moved);
  ASSERT_EQ(soon.size(), 1u);
  stored = store_->repos().GetRepo(repo);
  EXPECT_EQ((*stored)->last_polled_at, 1000) << "not written until write_soon runs the work";
  ASSERT_TRUE(soon[0]().ok());
  stored = store_->repos().GetRepo(repo);
  EXPECT_EQ((*stored)->last_polled_at, 2000);

  // A repo that fails (a ref that does not exist) changes state: recorded at once.
  Track(repo, {"no-such-branch"});
  now_ = 3000;
  EXPECT_FALSE(PollOnce(repo, options).ok);
  EXPECT_EQ(soon.size(), 1u);
  stored = store_->repos().GetRepo(repo);
  EXPECT_EQ((*stored)->state, store::RepoState::kErroring);
  EXPECT_EQ((*stored)->last_polled_at, 3000);
}

TEST_F(PipelineTest, Llama3EosIncidentProducesConfigAndGenerationConfigChanges) {
  Track("meta-llama/Meta-Llama-3-8B-Instruct");
  ASSERT_TRUE(PollOnce("meta-llama/Meta-Llama-3-8B-Instruct").ok);
  const auto changes = Changes("meta-llama/Meta-Llama-3-8B-Instruct");
  EXPECT_TRUE(Has(changes, diff::ChangeKind::kGenerationConfig, "eos_token_id"));
  EXPECT_TRUE(Has(changes, diff::ChangeKind::kConfig, "eos_token_id"));
}

TEST_F(PipelineTest, Gemma2EstimateMatchesItsHeadersExactly) {
  Track("google/gemma-2-9b-it");
  const PollReport r = PollOnce("google/gemma-2-9b-it");
  ASSERT_TRUE(r.ok) << r.error;
  const auto latest = store_->revisions().LatestEstimate("google/gemma-2-9b-it");
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->params_total, 9241705984u);
  ASSERT_TRUE((*latest)->parameter_delta.has_value());
  EXPECT_EQ(*(*latest)->parameter_delta, 0);
  EXPECT_EQ((*latest)->estimate["checkpoint"]["tensors"], 464);
  // Headers were read with range requests; no weight byte beyond them was downloaded.
  uint64_t cdn_bytes = 0;
  for (const auto& req : fakehub_->RequestLog()) {
    if (req.server == "cdn") {
      EXPECT_FALSE(req.range.empty()) << req.path;
      cdn_bytes += req.bytes;
    }
  }
  EXPECT_LT(cdn_bytes, 4u * 200'000u);
}

TEST_F(PipelineTest, IngestingTheSameHistoryIntoAFreshStoreGivesTheSameAdvisoryIds) {
  Track("meta-llama/Meta-Llama-3-8B-Instruct");
  ASSERT_TRUE(PollOnce("meta-llama/Meta-Llama-3-8B-Instruct").ok);
  const std::vector<std::string> first = AdvisoryIds();
  ASSERT_FALSE(first.empty());
  RemoveDb();
  OpenStore();
  Track("meta-llama/Meta-Llama-3-8B-Instruct");
  now_ += 86400;  // a different day: ids must not depend on when
  ASSERT_TRUE(PollOnce("meta-llama/Meta-Llama-3-8B-Instruct").ok);
  EXPECT_EQ(first, AdvisoryIds());
}

TEST_F(PipelineTest, DeletedAndGatedReposBecomeState) {
  Track("google/gemma-7b-it");
  ASSERT_TRUE(PollOnce("google/gemma-7b-it").ok);
  ASSERT_TRUE(fakehub_->DeleteRepo("google/gemma-7b-it").ok());
  PollReport deleted = PollOnce("google/gemma-7b-it");
  EXPECT_FALSE(deleted.ok);
  EXPECT_EQ(deleted.state, store::RepoState::kDeleted);
  auto repo = store_->repos().GetRepo("google/gemma-7b-it");
  EXPECT_EQ((*repo)->state, store::RepoState::kDeleted);
  EXPECT_FALSE(deleted.never_seen);  // so the scheduler polls it four times slower
  EXPECT_EQ(deleted.error.find("never seen"), std::string::npos) << deleted.error;

  // Gated, polled anonymously: refs stay readable on the Hub, the tree and files answer 401.
  ASSERT_TRUE(fakehub_->SetGated("google/gemma-2-9b-it", "manual").ok());
  hub::HubClientOptions anonymous = ClientOptions();
  anonymous.settings.token = hub::Secret();
  poller_.reset();
  stack_ = std::make_unique<hub::HubStack>(io_, anonymous);
  Track("google/gemma-2-9b-it");
  PollReport gated = PollOnce("google/gemma-2-9b-it");
  EXPECT_FALSE(gated.ok);
  EXPECT_EQ(gated.state, store::RepoState::kGated) << gated.error;
  repo = store_->repos().GetRepo("google/gemma-2-9b-it");
  EXPECT_EQ((*repo)->state, store::RepoState::kGated);
  EXPECT_EQ(gated.consecutive_errors, 0);  // not an error in a row: no backoff
}

TEST_F(PipelineTest, ARepoNotFoundBeforeItsFirstRevisionIsNeverSeenNotSlowedDown) {
  Track("someone/not-published-yet");
  PollReport r = PollOnce("someone/not-published-yet");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.state, store::RepoState::kDeleted);  // what the Hub says: 404 RepoNotFound
  EXPECT_TRUE(r.never_seen);
  EXPECT_NE(r.error.find("never seen by this store"), std::string::npos) << r.error;
  const auto repo = store_->repos().GetRepo("someone/not-published-yet");
  EXPECT_NE((*repo)->state_detail.find("not published yet"), std::string::npos);
}

TEST_F(PipelineTest, ARenameIsFollowedAndRecorded) {
  // Renamed before the first poll: every call follows the Hub's 307 to the new id, and the
  // whole history is ingested under the id the user tracks.
  ASSERT_TRUE(fakehub_->RenameRepo("meta-llama/Meta-Llama-3-8B", "meta-llama/Llama-3-8B").ok());
  Track("meta-llama/Meta-Llama-3-8B");
  const PollReport first = PollOnce("meta-llama/Meta-Llama-3-8B");
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.revisions, 4);
  EXPECT_EQ(first.renamed_to, "meta-llama/Llama-3-8B");
  EXPECT_EQ(first.state, store::RepoState::kRenamed);
  auto repo = store_->repos().GetRepo("meta-llama/Meta-Llama-3-8B");
  EXPECT_EQ((*repo)->state, store::RepoState::kRenamed);
  EXPECT_EQ((*repo)->renamed_to, "meta-llama/Llama-3-8B");
  EXPECT_TRUE(first.ok);  // polled as usual, not slowed down

  // Renamed after ingesting: the next poll records it and ingests nothing twice.
  Track("google/gemma-7b-it");
  ASSERT_TRUE(PollOnce("google/gemma-7b-it").ok);
  EXPECT_EQ((*store_->repos().GetRepo("google/gemma-7b-it"))->state, store::RepoState::kOk);
  ASSERT_TRUE(fakehub_->RenameRepo("google/gemma-7b-it", "google/gemma-1-7b-it").ok());
  const PollReport renamed = PollOnce("google/gemma-7b-it");
  ASSERT_TRUE(renamed.ok) << renamed.error;
  EXPECT_EQ(renamed.revisions, 0);
  EXPECT_EQ(renamed.renamed_to, "google/gemma-1-7b-it");
  repo = store_->repos().GetRepo("google/gemma-7b-it");
  EXPECT_EQ((*repo)->state, store::RepoState::kRenamed);
  EXPECT_EQ((*repo)->state_detail, "the Hub redirects it to google/gemma-1-7b-it");
}

TEST_F(PipelineTest, SuperSquashIsAHistoryChange) {
  Track("microsoft/Phi-3-mini-4k-instruct");
  ASSERT_TRUE(PollOnce("microsoft/Phi-3-mini-4k-instruct").ok);
  const size_t before = Revisions("microsoft/Phi-3-mini-4k-instruct").size();
  ASSERT_TRUE(fakehub_->SuperSquash("microsoft/Phi-3-mini-4k-instruct").ok());
  const PollReport r = PollOnce("microsoft/Phi-3-mini-4k-instruct");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.history_rewritten);
  const auto changes = Changes("microsoft/Phi-3-mini-4k-instruct");
  EXPECT_TRUE(Has(changes, diff::ChangeKind::kHistory, "rewritten"));
  size_t rewritten = 0;
  for (const auto& rev : Revisions("microsoft/Phi-3-mini-4k-instruct")) {
    rewritten += rev.rewritten_away;
  }
  EXPECT_EQ(rewritten, before);
}

}  // namespace
}  // namespace hubwatch::pipeline
