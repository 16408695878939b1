// The outcome of a poll in the repo's record: states, errors in a row, the never-seen note, and
// persisting it with the publication of settled bursts (a SQLite store in memory).

#include "tracker/pipeline/poll_outcome.h"

#include <gtest/gtest.h>

#include "tests/pipeline/step_test_support.h"
#include "tracker/advisory/time_text.h"
#include "tracker/pipeline/advisory_step.h"
#include "tracker/pipeline/hub_info.h"

namespace hubwatch::pipeline {
namespace {

constexpr char kRepo[] = "acme/model";
constexpr int64_t kNow = 1733145155;  // 2024-12-02T13:12:35Z

TEST(PollOutcome, TheRepoStateFollowsTheHubsError) {
  EXPECT_EQ(StateFor(hub::HubErrorKind::kNotFound), store::RepoState::kDeleted);
  EXPECT_EQ(StateFor(hub::HubErrorKind::kGatedAnonymous), store::RepoState::kGated);
  EXPECT_EQ(StateFor(hub::HubErrorKind::kGatedNotApproved), store::RepoState::kGated);
  EXPECT_EQ(StateFor(hub::HubErrorKind::kDisabled), store::RepoState::kDisabled);
  EXPECT_EQ(StateFor(hub::HubErrorKind::kTransient), store::RepoState::kErroring);
  EXPECT_EQ(StateFor(hub::HubErrorKind::kRateLimited), store::RepoState::kErroring);
}

TEST(PollOutcome, AGoodPollClearsTheErrorsAndLeavesTheNextPollToTheScheduler) {
  store::RepoRecord r{.id = kRepo, .state = store::RepoState::kErroring, .state_detail = "boom"};
  r.consecutive_errors = 3;
  r.next_poll_at = 77;
  RecordPolled(r, std::nullopt, kNow);
  EXPECT_EQ(r.state, store::RepoState::kOk);
  EXPECT_EQ(r.state_detail, "");
  EXPECT_EQ(r.consecutive_errors, 0);
  EXPECT_EQ(r.last_polled_at, kNow);
  EXPECT_EQ(r.next_poll_at, 77);

  RecordPolled(r, "acme/renamed", kNow);
  EXPECT_EQ(r.state, store::RepoState::kRenamed);
  EXPECT_EQ(r.state_detail, "the Hub redirects it to acme/renamed");
  EXPECT_EQ(r.renamed_to, "acme/renamed");
}

TEST(PollOutcome, ErrorsCountInARowOnlyWhileTheRepoIsErroring) {
  store::RepoRecord r{.id = kRepo};
  for (int i = 0; i < 3; ++i) RecordFailed(r, store::RepoState::kErroring, "timed out", kNow);
  EXPECT_EQ(r.consecutive_errors, 3);
  EXPECT_EQ(r.state, store::RepoState::kErroring);
  EXPECT_EQ(r.state_detail, "timed out");
  EXPECT_EQ(r.last_polled_at, kNow);
  EXPECT_EQ(r.next_poll_at, 0);  // the scheduler's to decide

  store::RepoRecord gone{.id = kRepo};
  RecordFailed(gone, store::RepoState::kDeleted, "not found", kNow);
  EXPECT_EQ(gone.consecutive_errors, 0);
  EXPECT_EQ(gone.state, store::RepoState::kDeleted);
}

TEST(PollOutcome, ANeverSeenRepoSaysSo) {
  EXPECT_EQ(FailureDetail("not found", false), "not found");
  EXPECT_EQ(FailureDetail("not found", true),
            "not found; never seen by this store: not published yet, private, or misspelled");
}

TEST(PollOutcome, TheStateIsStateDetailRenameAndErrorsNotPollTimes) {
  store::RepoRecord a{.id = kRepo, .last_polled_at = 1, .next_poll_at = 2};
  store::RepoRecord b = a;
  b.last_polled_at = 10;
  b.next_poll_at = 20;
  EXPECT_TRUE(SameState(a, b));
  for (auto change : std::vector<std::function<void(store::RepoRecord&)>>{
           [](auto& r) { r.state = store::RepoState::kGated; },
           [](auto& r) { r.state_detail = "x"; }, [](auto& r) { r.renamed_to = "acme/y"; },
           [](auto& r) { r.consecutive_errors = 1; }}) {
    store::RepoRecord c = a;
    change(c);
    EXPECT_FALSE(SameState(a, c));
  }
}

class PersistTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(store_ = MemoryStoreTracking(kRepo)); }

  // Ingests one revision whose one advisory is held until `settle_at`.
  void IngestHeld(int64_t settle_at) {
    store::RevisionIngest in;
    in.revision = {.repo = kRepo, .sha = std::string(40, 'a'), .first_seen_at = kNow};
    in.changes = {MakeChange(diff::ChangeKind::kConfig, diff::Impact::kBehavioral, "config.json")};
    ASSERT_TRUE(AdviseRevision(in, PollerOptions{}, /*tracked_since=*/0, [](const diff::Change&) {
                  return Result<std::optional<std::string>>(std::nullopt);
                }).ok());
    in.settle_at = settle_at;
    in.ref_heads = {{"main", in.revision.sha}};
    ASSERT_TRUE(store_->revisions().Ingest(in).ok());
  }

  store::RepoRecord Stored() {
    auto r = store_->repos().GetRepo(kRepo);
    EXPECT_TRUE(r.ok() && *r);
    return r.ok() && *r ? **r : store::RepoRecord{};
  }

  std::unique_ptr<store::Store> store_;
};

TEST_F(PersistTest, RecordsThePollAndReportsIt) {
  store::RepoRecord r = Stored();
  RecordFailed(r, store::RepoState::kErroring, "timed out", kNow);
  const Persisted p = PersistPoll(*store_, kRepo, kNow, r);
  ASSERT_TRUE(p.status.ok()) << p.status.error().message;
  EXPECT_EQ(p.released, 0);
  EXPECT_FALSE(p.settles_at);
  EXPECT_FALSE(SettleLine(kRepo, p));
  const store::RepoRecord stored = Stored();
  EXPECT_EQ(stored.state, store::RepoState::kErroring);
  EXPECT_EQ(stored.state_detail, "timed out");
  EXPECT_EQ(stored.consecutive_errors, 1);

  PollReport report;
  report.published = 2;
  AddToReport(p, report);
  EXPECT_TRUE(report.ok);
  EXPECT_EQ(report.published, 2);
  EXPECT_FALSE(report.settles_at);
}

TEST_F(PersistTest, AHeldBurstIsReportedWithItsSettleTimeAndPublishedOnceSettled) {
  IngestHeld(kNow + 60);
  store::RepoRecord r = Stored();
  RecordPolled(r, std::nullopt, kNow);
  Persisted p = PersistPoll(*store_, kRepo, kNow, r);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.released, 0);
  EXPECT_EQ(p.settles_at, kNow + 60);  // the scheduler polls again then (next_poll_test.cc)
  PollReport held;
  AddToReport(p, held);
  EXPECT_EQ(held.settles_at, kNow + 60);
  EXPECT_EQ(SettleLine(kRepo, p), "acme/model: advisories held until the burst settles at " +
                                      advisory::Rfc3339(kNow + 60));

  RecordPolled(r, std::nullopt, kNow + 60);
  p = PersistPoll(*store_, kRepo, kNow + 60, r);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.released, 1);
  EXPECT_FALSE(p.settles_at);
  EXPECT_EQ(SettleLine(kRepo, p), "acme/model: the burst settled: published 1 held advisory(ies)");
  PollReport report;
  AddToReport(p, report);
  EXPECT_EQ(report.published, 1);
}

TEST(PollOutcome, AFailureToPersistFailsOnlyAPollThatWasGood) {
  Persisted failed{.status = Error::Io("disk full")};
  PollReport good;
  AddToReport(failed, good);
  EXPECT_FALSE(good.ok);
  EXPECT_EQ(good.error, "disk full");
  PollReport bad{.ok = false, .error = "timed out"};
  AddToReport(failed, bad);
  EXPECT_EQ(bad.error, "timed out");  // the first failure is the one reported
}

TEST(HubInfo, IsDueWhenMissingOldOrTheHeadMovedAndNeverWhenOff) {
  PollerOptions on;
  on.hub_info_interval_s = 86400;
  const store::HubInfo never;
  const store::HubInfo fresh{.fetched_at = 1000};
  EXPECT_TRUE(HubInfoDue(never, false, 2000, on));
  EXPECT_FALSE(HubInfoDue(fresh, false, 1000 + 86399, on));
  EXPECT_TRUE(HubInfoDue(fresh, false, 1000 + 86400, on));
  EXPECT_TRUE(HubInfoDue(fresh, true, 1001, on));
  EXPECT_FALSE(HubInfoDue(never, true, 2000, PollerOptions{}));
}

// Upstream decides how many tags a repo has and how long they are; the store keeps 64 of at
// most 200 bytes, and a count past int64 is clamped.
TEST(HubInfo, IsBoundedWhateverTheHubSends) {
  hub::ModelInfo info;
  info.downloads = UINT64_MAX;
  info.likes = 3;
  for (int i = 0; i < 1000; ++i) info.tags.push_back(std::string(5000, 'a' + i % 26));
  const store::HubInfo out = HubInfoOf(info, 77);
  EXPECT_EQ(out.downloads, INT64_MAX);
  EXPECT_EQ(out.likes, 3);
  ASSERT_EQ(out.tags.size(), store::kMaxHubTags);
  for (const std::string& tag : out.tags) EXPECT_LE(tag.size(), store::kMaxHubTagBytes);
  EXPECT_EQ(out.fetched_at, 77);
  EXPECT_FALSE(HubInfoOf(hub::ModelInfo{}, 1).downloads.has_value());
}

}  // namespace
}  // namespace hubwatch::pipeline
