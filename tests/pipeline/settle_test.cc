// Settling bursts: a burst of upstream commits is ingested as it arrives, but its advisories
// are published (seq, feeds, outbox rows) only once no commit came for the settle window.
// fakehub replays DeepSeek-R1-Distill-Qwen-7B's history with its clock stopped where the test
// puts it: the initial upload (two commits 31 minutes apart on 2025-01-20, no change to advise),
// then a chat template change on 2025-02-08.

#include <gtest/gtest.h>

#include "tests/pipeline/pipeline_env.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::pipeline {
namespace {

constexpr const char kRepo[] = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B";
constexpr int64_t kWindow = 600;

int64_t At(const char* rfc3339) { return advisory::ParseTime(rfc3339).value(); }

// The first poll ingests the initial upload (no change to advise) and settles nothing; then the
// replay clock moves to just after the next commit, which changes the chat template.
constexpr char kUpload[] = "2025-01-20T09:32:00Z";
constexpr char kTemplateCommit[] = "2025-02-08T03:17:29Z";
constexpr char kAfterTemplateCommit[] = "2025-02-08T03:20:00Z";

class SettleTest : public PipelineTest {
 protected:
  void SetUp() override {
    replay_start_ = At(kUpload);  // just after the initial upload's second commit
    PipelineTest::SetUp();
    Track(kRepo);
  }

  PollerOptions Options() {
    PollerOptions o;
    o.settle_window_s = kWindow;
    o.outbox_targets = [](const std::string&, const diff::Change&, bool) {
      return std::vector<std::string>{"subscription:1"};
    };
    return o;
  }

  int64_t Held() {
    auto bursts = store_->advisories().HeldBursts();
    EXPECT_TRUE(bursts.ok());
    int64_t n = 0;
    for (const auto& b : *bursts) n += b.advisories;
    return n;
  }

  // Moves the replay clock and `now_` from kUpload to `when`.
  void AdvanceTo(const char* when) {
    fakehub_->AdvanceReplayClock(std::chrono::seconds(At(when) - At(kUpload)));
    now_ = At(when);
  }

  std::vector<store::OutboxRow> Outbox() {
    auto rows = store_->outbox().ListDeliveries(1);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<store::OutboxRow>{};
  }
};

TEST_F(SettleTest, ABurstIsAdvisedOnceItHasBeenQuietForTheWindow) {
  now_ = At(kUpload);
  PollReport upload = PollOnce(kRepo, Options());
  ASSERT_TRUE(upload.ok) << upload.error;
  EXPECT_EQ(upload.revisions, 2);
  EXPECT_EQ(upload.advisories, 0);  // the initial upload is no change
  EXPECT_FALSE(upload.settles_at.has_value());

  AdvanceTo(kAfterTemplateCommit);
  const int64_t commit = At(kTemplateCommit);
  PollReport first = PollOnce(kRepo, Options());
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.revisions, 1);
  ASSERT_GT(first.advisories, 0);
  EXPECT_EQ(first.published, 0);
  // Recorded, held for the whole burst, invisible to readers and to webhooks.
  EXPECT_EQ(Held(), first.advisories);
  EXPECT_TRUE(Advisories(kRepo).empty());
  EXPECT_TRUE(Outbox().empty());
  auto bursts = store_->advisories().HeldBursts();
  ASSERT_EQ(bursts->size(), 1u);
  EXPECT_EQ((*bursts)[0].settle_at, commit + kWindow);  // from the commit's own time
  ASSERT_TRUE(first.settles_at.has_value());
  EXPECT_EQ(*first.settles_at, commit + kWindow);  // the scheduler polls again then

  // One second early: still held.
  now_ = commit + kWindow - 1;
  PollReport early = PollOnce(kRepo, Options());
  EXPECT_EQ(early.published, 0);
  EXPECT_EQ(Held(), first.advisories);

  // Settled: everything is published at once, in ingest order, with both times recorded.
  now_ = commit + kWindow;
  PollReport settled = PollOnce(kRepo, Options());
  ASSERT_TRUE(settled.ok) << settled.error;
  EXPECT_EQ(settled.revisions, 0);
  EXPECT_EQ(settled.published, first.advisories);
  EXPECT_FALSE(settled.settles_at.has_value());
  EXPECT_EQ(Held(), 0);
  std::vector<store::AdvisoryRecord> published = Advisories(kRepo);
  ASSERT_EQ(static_cast<int>(published.size()), first.advisories);
  for (size_t i = 0; i < published.size(); ++i) {
    const store::AdvisoryRecord& a = published[i];
    if (i > 0) {
      EXPECT_GT(a.seq, published[i - 1].seq);
    }
    EXPECT_EQ(a.published, "2025-02-08T03:27:29Z");
    EXPECT_EQ(a.osv["published"], "2025-02-08T03:27:29Z");
    EXPECT_EQ(a.osv["modified"], "2025-02-08T03:27:29Z");
    EXPECT_EQ(a.osv["database_specific"]["ingested_at"], advisory::Rfc3339(*a.ingested_at));
    EXPECT_TRUE(a.osv["database_specific"]["committed_at"].is_string());
    EXPECT_EQ(*a.ingested_at, At(kAfterTemplateCommit));  // when the poll ingested it
  }
  EXPECT_EQ(Outbox().size(), published.size());  // one delivery each, queued on publication

  // Nothing is published twice.
  PollReport again = PollOnce(kRepo, Options());
  EXPECT_EQ(again.published, 0);
  EXPECT_EQ(Advisories(kRepo).size(), published.size());
}

TEST_F(SettleTest, AWindowOfZeroPublishesAsItIngests) {
  now_ = At(kUpload);
  PollerOptions o = Options();
  o.settle_window_s = 0;
  ASSERT_TRUE(PollOnce(kRepo, o).ok);
  AdvanceTo(kAfterTemplateCommit);
  PollReport r = PollOnce(kRepo, o);
  ASSERT_GT(r.advisories, 0);
  EXPECT_EQ(r.published, r.advisories);
  EXPECT_EQ(Held(), 0);
  EXPECT_EQ(static_cast<int>(Advisories(kRepo).size()), r.advisories);
  EXPECT_EQ(Outbox().size(), static_cast<size_t>(r.advisories));
}

TEST_F(SettleTest, HeldAdvisoriesSurviveAReopenAndKeepTheirIds) {
  now_ = At(kUpload);
  ASSERT_TRUE(PollOnce(kRepo, Options()).ok);
  AdvanceTo(kAfterTemplateCommit);
  PollReport first = PollOnce(kRepo, Options());
  ASSERT_GT(first.advisories, 0);
  OpenStore();  // a restart between ingest and publication
  EXPECT_EQ(Held(), first.advisories);
  now_ = At(kTemplateCommit) + kWindow;
  PollReport settled = PollOnce(kRepo, Options());
  EXPECT_EQ(settled.published, first.advisories);

  // A fresh store fed the same history without a window gets the same advisory ids.
  std::vector<std::string> held_then_published = AdvisoryIds();
  RemoveDb();
  OpenStore();
  Track(kRepo);
  PollerOptions o = Options();
  o.settle_window_s = 0;
  PollOnce(kRepo, o);
  EXPECT_EQ(AdvisoryIds(), held_then_published);
}

}  // namespace
}  // namespace hubwatch::pipeline
