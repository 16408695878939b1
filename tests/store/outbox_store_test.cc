// OutboxStore and DeliveryQueue against a real SQLite database: config subscription sync, the
// delivery queue's order, retries and failures, orphaned rows and the tally by state.

#include "tracker/store/outbox_store.h"

#include <gtest/gtest.h>

#include "tests/store/store_fixtures.h"

namespace hubwatch::store {
namespace {

constexpr char kRepo[] = "google/gemma-2-9b-it";

Subscription Sub(const std::string& url, diff::Impact min_impact = diff::Impact::kBehavioral) {
  Subscription s;
  s.url = url;
  s.secret = "whsec_c2VjcmV0";
  s.min_impact = min_impact;
  return s;
}

class OutboxStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(":memory:");
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->repos().AddRepo({.id = kRepo, .refs = {"main"}}).ok());
  }
  OutboxStore& outbox() { return store_->outbox(); }
  DeliveryQueue& deliveries() { return store_->deliveries(); }
  // Ingests revision `sha` with one advisory, x_HUBWATCH-<sha>, for `targets`.
  void Queue(const std::string& sha, std::vector<std::string> targets) {
    RevisionIngest in = SampleIngest(sha, "");
    in.advisories[0].targets = std::move(targets);
    Result<IngestOutcome> r = store_->revisions().Ingest(in);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  std::unique_ptr<Store> store_;
};

TEST_F(OutboxStoreTest, SyncAddsUpdatesAndRemovesConfigSubscriptionsOnly) {
  Result<int64_t> api = outbox().AddSubscription(Sub("https://api.example/"));
  ASSERT_TRUE(api.ok());
  Result<SubscriptionSync> first =
      outbox().SyncConfigSubscriptions({Sub("https://a.example/"), Sub("https://b.example/")}, 10);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->added, 2);
  EXPECT_EQ(first->updated + first->removed + first->unchanged, 0);

  Result<SubscriptionSync> second = outbox().SyncConfigSubscriptions(
      {Sub("https://a.example/", diff::Impact::kBreaking), Sub("https://c.example/")}, 20);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->added, 1);
  EXPECT_EQ(second->updated, 1);
  EXPECT_EQ(second->removed, 1);
  EXPECT_EQ(second->unchanged, 0);

  Result<SubscriptionSync> third = outbox().SyncConfigSubscriptions(
      {Sub("https://a.example/", diff::Impact::kBreaking), Sub("https://c.example/")}, 30);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->unchanged, 2);
  EXPECT_EQ(third->added + third->updated + third->removed, 0);

  Result<std::vector<Subscription>> all = outbox().ListSubscriptions();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].url, "https://api.example/");  // left alone
  EXPECT_EQ((*all)[0].source, Source::kApi);
  EXPECT_EQ((*all)[1].url, "https://a.example/");
  EXPECT_EQ((*all)[1].source, Source::kConfig);
  EXPECT_EQ((*all)[1].min_impact, diff::Impact::kBreaking);
  EXPECT_EQ((*all)[1].updated_at, 20);
  EXPECT_EQ((*all)[2].url, "https://c.example/");

  EXPECT_FALSE(
      outbox()
          .SyncConfigSubscriptions({Sub("https://d.example/"), Sub("https://d.example/")}, 40)
          .ok());
}

TEST_F(OutboxStoreTest, DueDeliveriesComeEarliestFirstAndOnlyWhenDue) {
  Result<int64_t> id = outbox().AddSubscription(Sub("https://a.example/"));
  ASSERT_TRUE(id.ok());
  ASSERT_EQ(*id, 1);
  Queue("a1", {"subscription:1"});
  Queue("b2", {"subscription:1"});
  Queue("c3", {"subscription:1"});
  ASSERT_TRUE(deliveries().Defer("x_HUBWATCH-a1", 300).ok());
  ASSERT_TRUE(deliveries().Defer("x_HUBWATCH-b2", 100).ok());
  ASSERT_TRUE(deliveries().Defer("x_HUBWATCH-c3", 200).ok());

  Result<std::vector<Delivery>> due = deliveries().Due(250, 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 2u);
  EXPECT_EQ((*due)[0].advisory_id, "x_HUBWATCH-b2");
  EXPECT_EQ((*due)[1].advisory_id, "x_HUBWATCH-c3");
  EXPECT_EQ((*due)[0].url, "https://a.example/");
  EXPECT_EQ((*due)[0].body, "{\"id\":\"x_HUBWATCH-b2\"}");
  EXPECT_EQ(deliveries().Due(250, 1)->size(), 1u);
  EXPECT_EQ(*deliveries().NextAttemptAt(), std::optional<int64_t>(100));
  EXPECT_EQ(*outbox().CountPendingDeliveries(), 3);
}

TEST_F(OutboxStoreTest, ARetryStaysPendingAndAFailureIsFinal) {
  ASSERT_TRUE(outbox().AddSubscription(Sub("https://a.example/")).ok());
  Queue("a1", {"subscription:1"});
  Queue("b2", {"subscription:1"});
  const std::vector<OutboxRow> rows = *outbox().ListDeliveries(1);
  ASSERT_EQ(rows.size(), 2u);

  ASSERT_TRUE(deliveries()
                  .RecordAttempt({.outbox_id = rows[0].id,
                                  .at = 50,
                                  .status = 503,
                                  .error = "HTTP 503",
                                  .outcome = DeliveryOutcome::kRetry,
                                  .next_attempt_at = 80})
                  .ok());
  ASSERT_TRUE(deliveries()
                  .RecordAttempt({.outbox_id = rows[1].id,
                                  .at = 50,
                                  .error = "HTTP 410",
                                  .outcome = DeliveryOutcome::kFailed})
                  .ok());
  // A late retry of a failed row changes nothing.
  ASSERT_TRUE(deliveries()
                  .RecordAttempt({.outbox_id = rows[1].id,
                                  .at = 60,
                                  .outcome = DeliveryOutcome::kRetry,
                                  .next_attempt_at = 90})
                  .ok());
  std::vector<OutboxRow> after = *outbox().ListDeliveries(1);
  EXPECT_EQ(after[0].state, DeliveryState::kPending);
  EXPECT_EQ(after[0].attempts, 1);
  EXPECT_EQ(after[0].next_attempt_at, 80);
  EXPECT_EQ(after[0].last_status, 503);
  EXPECT_EQ(after[0].last_error, "HTTP 503");
  EXPECT_EQ(after[1].state, DeliveryState::kFailed);
  EXPECT_EQ(after[1].attempts, 1);
  EXPECT_EQ(after[1].last_error, "HTTP 410");

  ASSERT_TRUE(deliveries()
                  .RecordAttempt({.outbox_id = rows[0].id,
                                  .at = 80,
                                  .status = 200,
                                  .outcome = DeliveryOutcome::kDelivered})
                  .ok());
  after = *outbox().ListDeliveries(1);
  EXPECT_EQ(after[0].state, DeliveryState::kDelivered);
  EXPECT_EQ(after[0].delivered_at, 80);
  EXPECT_EQ(after[0].attempts, 2);
}

TEST_F(OutboxStoreTest, OrphanedRowsFailAndTheTallyCountsByState) {
  ASSERT_TRUE(outbox().AddSubscription(Sub("https://a.example/")).ok());  // 1
  ASSERT_TRUE(outbox().AddSubscription(Sub("https://b.example/")).ok());  // 2
  Queue("a1", {"subscription:1", "subscription:2", "subscription:7"});
  Queue("b2", {"subscription:1", "subscription:2"});
  // Disabled behind the store's back (another process): its rows are orphans.
  ASSERT_TRUE(store_->db().Exec("UPDATE subscriptions SET disabled_at = 5 WHERE id = 2", "t").ok());
  const std::vector<OutboxRow> ones = *outbox().ListDeliveries(1);
  ASSERT_TRUE(
      deliveries()
          .RecordAttempt({.outbox_id = ones[0].id, .at = 9, .outcome = DeliveryOutcome::kDelivered})
          .ok());

  Result<int64_t> failed = deliveries().FailOrphans(100);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(*failed, 3);  // one of the missing subscription 7, two of the disabled 2
  EXPECT_EQ(*deliveries().FailOrphans(101), 0);
  const std::vector<OutboxRow> sevens = *outbox().ListDeliveries(7);
  ASSERT_EQ(sevens.size(), 1u);
  EXPECT_EQ(sevens[0].state, DeliveryState::kFailed);
  EXPECT_EQ(sevens[0].last_error, "subscription removed");
  EXPECT_EQ(sevens[0].last_attempt_at, 100);

  Result<std::map<int64_t, DeliveryTally>> tally = outbox().TallyDeliveries();
  ASSERT_TRUE(tally.ok());
  ASSERT_EQ(tally->size(), 3u);
  EXPECT_EQ(tally->at(1).delivered, 1);
  EXPECT_EQ(tally->at(1).pending, 1);
  EXPECT_EQ(tally->at(1).failed, 0);
  EXPECT_EQ(tally->at(2).failed, 2);
  EXPECT_EQ(tally->at(7).failed, 1);
  EXPECT_EQ(*outbox().CountPendingDeliveries(), 1);

  // Removing a subscription fails its pending rows.
  EXPECT_TRUE(*outbox().RemoveSubscription(1, 200));
  EXPECT_FALSE(*outbox().RemoveSubscription(1, 201));
  EXPECT_EQ(outbox().TallyDeliveries()->at(1).failed, 1);
  EXPECT_EQ(outbox().TallyDeliveries()->at(1).pending, 0);
}

}  // namespace
}  // namespace hubwatch::store
