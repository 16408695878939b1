// Settling bursts: a burst of upstream commits is ingested as it arrives, but its advisories
// are published (seq, feeds, outbox rows) only once no commit came for the settle window.
// fakehub replays DeepSeek-R1-Distill-Qwen-7B's history with its clock stopped where the test
// puts it: two commits 31 minutes apart on 2025-01-20, a third on 2025-02-08.

#include <gtest/gtest.h>

#include "tests/pipeline/pipeline_env.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::pipeline {
namespace {

constexpr const char kRepo[] = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B";
constexpr int64_t kWindow = 600;

int64_t At(const char* rfc3339) { return advisory::ParseTime(rfc3339).value(); }

class SettleTest : public PipelineTest {
 protected:
  void SetUp() override {
    replay_start_ = At("2025-01-20T09:32:00Z");  // just after the burst's second commit
    PipelineTest::SetUp();
    Track(kRepo);
  }

  PollerOptions Options() {
    PollerOptions o;
    o.settle_window_s = kWindow;
    o.outbox_targets = [](const std::string&, const diff::Change&) {
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

  std::vector<store::OutboxRow> Outbox() {
    auto rows = store_->outbox().ListDeliveries(1);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<store::OutboxRow>{};
  }
};

TEST_F(SettleTest, ABurstIsAdvisedOnceItHasBeenQuietForTheWindow) {
  const int64_t second_commit = At("2025-01-20T09:31:47Z");
  now_ = At("2025-01-20T09:32:00Z");
  PollReport first = PollOnce(kRepo, Options());
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.revisions, 2);
  ASSERT_GT(first.advisories, 0);
  EXPECT_EQ(first.published, 0);
  // Recorded, held for the whole burst, invisible to readers and to webhooks.
  EXPECT_EQ(Held(), first.advisories);
  EXPECT_TRUE(Advisories(kRepo).empty());
  EXPECT_TRUE(Outbox().empty());
  auto bursts = store_->advisories().HeldBursts();
  ASSERT_EQ(bursts->size(), 1u);
  EXPECT_EQ((*bursts)[0].settle_at, second_commit + kWindow);  // the last commit sets it
  ASSERT_TRUE(first.settles_at.has_value());
  EXPECT_EQ(*first.settles_at, second_commit + kWindow);
  EXPECT_LE(first.next_poll_at, second_commit + kWindow);  // polled again when it settles

  // One second early: still held.
  now_ = second_commit + kWindow - 1;
  PollReport early = PollOnce(kRepo, Options());
  EXPECT_EQ(early.published, 0);
  EXPECT_EQ(Held(), first.advisories);

  // Settled: everything is published at once, in ingest order, with both times recorded.
  now_ = second_commit + kWindow;
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
    EXPECT_EQ(a.published, "2025-01-20T09:41:47Z");
    EXPECT_EQ(a.osv["published"], "2025-01-20T09:41:47Z");
    EXPECT_EQ(a.osv["modified"], "2025-01-20T09:41:47Z");
    EXPECT_EQ(a.osv["database_specific"]["ingested_at"], advisory::Rfc3339(*a.ingested_at));
    EXPECT_TRUE(a.osv["database_specific"]["committed_at"].is_string());
    EXPECT_EQ(*a.ingested_at, At("2025-01-20T09:32:00Z"));  // when the poll ingested it
  }
  EXPECT_EQ(Outbox().size(), published.size());  // one delivery each, queued on publication

  // Nothing is published twice.
  PollReport again = PollOnce(kRepo, Options());
  EXPECT_EQ(again.published, 0);
  EXPECT_EQ(Advisories(kRepo).size(), published.size());

  // The next burst, 19 days later, is held on its own and follows in seq order.
  fakehub_->AdvanceReplayClock(
      std::chrono::seconds(At("2025-02-08T03:20:00Z") - At("2025-01-20T09:32:00Z")));
  now_ = At("2025-02-08T03:20:00Z");
  PollReport next = PollOnce(kRepo, Options());
  EXPECT_EQ(next.revisions, 1);
  EXPECT_EQ(next.published, 0);
  ASSERT_TRUE(next.settles_at.has_value());
  EXPECT_EQ(*next.settles_at, At("2025-02-08T03:17:29Z") + kWindow);
  now_ = *next.settles_at;
  PollReport later = PollOnce(kRepo, Options());
  EXPECT_EQ(later.published, next.advisories);
  std::vector<store::AdvisoryRecord> all = Advisories(kRepo);
  ASSERT_EQ(all.size(), published.size() + static_cast<size_t>(next.advisories));
  EXPECT_GT(all.back().seq, published.back().seq);
}

TEST_F(SettleTest, AWindowOfZeroPublishesAsItIngests) {
  now_ = At("2025-01-20T09:32:00Z");
  PollerOptions o = Options();
  o.settle_window_s = 0;
  PollReport r = PollOnce(kRepo, o);
  ASSERT_GT(r.advisories, 0);
  EXPECT_EQ(r.published, r.advisories);
  EXPECT_EQ(Held(), 0);
  EXPECT_EQ(static_cast<int>(Advisories(kRepo).size()), r.advisories);
  EXPECT_EQ(Outbox().size(), static_cast<size_t>(r.advisories));
}

TEST_F(SettleTest, HeldAdvisoriesSurviveAReopenAndKeepTheirIds) {
  now_ = At("2025-01-20T09:32:00Z");
  PollReport first = PollOnce(kRepo, Options());
  ASSERT_GT(first.advisories, 0);
  OpenStore();  // a restart between ingest and publication
  EXPECT_EQ(Held(), first.advisories);
  now_ = At("2025-01-20T09:50:00Z");
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
