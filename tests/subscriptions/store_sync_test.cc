// The store's subscription methods (migration 0003) and the config sync on top of them.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "daemon/subscriptions/config_sync.h"
#include "daemon/subscriptions/matcher.h"
#include "tests/subscriptions/test_support.h"

namespace hubwatch::subscriptions {
namespace {

using store::Delivery;
using store::DeliveryAttempt;
using store::DeliveryOutcome;
using store::DeliveryTally;
using store::OutboxRow;
using store::Store;
using store::Subscription;
using store::SubscriptionSync;
using testing::AddAdvisory;
using testing::OpenStore;
using testing::Sha;

constexpr char kSecretA[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kSecretB[] = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

Subscription ApiSub(const std::string& url) {
  Subscription s;
  s.url = url;
  s.secret = kSecretA;
  s.source = store::Source::kApi;
  s.created_at = 100;
  return s;
}

std::string StateOf(Store& s, int64_t sub) {
  Result<std::vector<OutboxRow>> rows = s.outbox().ListDeliveries(sub);
  EXPECT_TRUE(rows.ok());
  std::string out;
  for (const OutboxRow& r : *rows) {
    out += (out.empty() ? "" : ",") + std::string(store::DeliveryStateName(r.state));
  }
  return out;
}

TEST(StoreSubscriptions, AddListGetRemoveAndIdsAreNeverReused) {
  auto s = OpenStore();
  Subscription a = ApiSub("https://a.example/");
  a.kinds = {"config", "weights"};
  a.repos = "google/*";
  a.min_impact = diff::Impact::kBreaking;
  Result<int64_t> id1 = s->outbox().AddSubscription(a);
  Result<int64_t> id2 = s->outbox().AddSubscription(ApiSub("https://b.example/"));
  ASSERT_TRUE(id1.ok() && id2.ok());
  Result<std::optional<Subscription>> got = s->outbox().GetSubscription(*id1);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->kinds, (std::vector<std::string>{"config", "weights"}));
  EXPECT_EQ((*got)->repos, "google/*");
  EXPECT_EQ((*got)->min_impact, diff::Impact::kBreaking);
  EXPECT_EQ((*got)->secret, kSecretA);
  EXPECT_EQ((*got)->created_at, 100);
  EXPECT_FALSE((*got)->disabled_at.has_value());

  Result<bool> removed = s->outbox().RemoveSubscription(*id2, 200);
  ASSERT_TRUE(removed.ok() && *removed);
  Result<bool> again = s->outbox().RemoveSubscription(*id2, 200);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  // AUTOINCREMENT: the next id is past the removed one, so old outbox targets stay dangling.
  Result<int64_t> id3 = s->outbox().AddSubscription(ApiSub("https://c.example/"));
  ASSERT_TRUE(id3.ok());
  EXPECT_GT(*id3, *id2);
  Result<std::vector<Subscription>> all = s->outbox().ListSubscriptions();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, *id1);
  EXPECT_EQ((*all)[1].id, *id3);
}

TEST(StoreSubscriptions, DueDeliveriesJoinAdvisoriesAndSkipOthers) {
  auto s = OpenStore();
  Result<int64_t> on = s->outbox().AddSubscription(ApiSub("https://on.example/"));
  Result<int64_t> off = s->outbox().AddSubscription(ApiSub("https://off.example/"));
  ASSERT_TRUE(on.ok() && off.ok());
  const std::string adv =
      AddAdvisory(*s, "google/gemma", Sha(1),
                  {"subscription:" + std::to_string(*on), "subscription:" + std::to_string(*off),
                   "subscription:999", "channel:stream"},
                  1000);
  ASSERT_TRUE(s->outbox().DisableSubscription(*off, "gone", 1001).ok());
  Result<std::vector<Delivery>> due = s->deliveries().Due(1000, 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u);
  const Delivery& d = (*due)[0];
  EXPECT_EQ(d.subscription_id, *on);
  EXPECT_EQ(d.advisory_id, adv);
  EXPECT_EQ(d.url, "https://on.example/");
  EXPECT_EQ(nlohmann::json::parse(d.body)["id"], adv);
  EXPECT_EQ(d.created_at, 1000);
  EXPECT_EQ(StateOf(*s, *off), "failed");
  Result<std::vector<OutboxRow>> off_rows = s->outbox().ListDeliveries(*off);
  EXPECT_EQ((*off_rows)[0].last_error, "subscription disabled: gone");

  // A retry moves it out of the due set until its time.
  DeliveryAttempt retry{d.outbox_id, 1000, 500, "HTTP 500", DeliveryOutcome::kRetry, 1060};
  ASSERT_TRUE(s->deliveries().RecordAttempt(retry).ok());
  EXPECT_TRUE(s->deliveries().Due(1059, 10)->empty());
  EXPECT_EQ(**s->deliveries().NextAttemptAt(), 1060);
  ASSERT_EQ(s->deliveries().Due(1060, 10)->size(), 1u);
  EXPECT_EQ((*s->deliveries().Due(1060, 10))[0].attempts, 1);
  EXPECT_EQ(*s->outbox().CountPendingDeliveries(), 1);  // not the orphan of subscription 999

  // Deferral only moves rows later.
  ASSERT_TRUE(s->deliveries().Defer(adv, 2000).ok());
  EXPECT_EQ(**s->deliveries().NextAttemptAt(), 2000);
  ASSERT_TRUE(s->deliveries().Defer(adv, 1500).ok());
  EXPECT_EQ(**s->deliveries().NextAttemptAt(), 2000);

  DeliveryAttempt ok{d.outbox_id, 2000, 204, "", DeliveryOutcome::kDelivered, 0};
  ASSERT_TRUE(s->deliveries().RecordAttempt(ok).ok());
  Result<std::vector<OutboxRow>> rows = s->outbox().ListDeliveries(*on);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].state, store::DeliveryState::kDelivered);
  EXPECT_EQ((*rows)[0].attempts, 2);
  EXPECT_EQ((*rows)[0].last_status, 204);
  EXPECT_EQ((*rows)[0].delivered_at, 2000);
  EXPECT_FALSE(s->deliveries().NextAttemptAt()->has_value());

  // The orphan (subscription 999 never existed) fails on request, and so does a row queued for
  // a subscription after it was disabled.
  AddAdvisory(*s, "google/gemma", Sha(9), {"subscription:" + std::to_string(*off)}, 2500);
  EXPECT_EQ(*s->deliveries().FailOrphans(3000), 2);
  EXPECT_EQ(*s->outbox().CountPendingDeliveries(), 0);
  EXPECT_EQ(s->outbox().ListDeliveries(*off)->back().last_error, "subscription disabled");
  Result<std::map<int64_t, DeliveryTally>> tally = s->outbox().TallyDeliveries();
  ASSERT_TRUE(tally.ok());
  EXPECT_EQ(tally->at(*on).delivered, 1);
  EXPECT_EQ(tally->at(*off).failed, 2);
  EXPECT_EQ(tally->at(999).failed, 1);
}

TEST(StoreSubscriptions, AFailedRowIsNotRevivedByALateRetry) {
  auto s = OpenStore();
  Result<int64_t> id = s->outbox().AddSubscription(ApiSub("https://x.example/"));
  AddAdvisory(*s, "a/b", Sha(2), {"subscription:" + std::to_string(*id)}, 10);
  const int64_t row = (*s->outbox().ListDeliveries(*id))[0].id;
  ASSERT_TRUE(s->outbox().RemoveSubscription(*id, 20).ok());
  DeliveryAttempt retry{row, 21, 500, "HTTP 500", DeliveryOutcome::kRetry, 99};
  ASSERT_TRUE(s->deliveries().RecordAttempt(retry).ok());
  EXPECT_EQ(StateOf(*s, *id), "failed");
}

// Config entries with secret files in a temp dir.
class ConfigSync : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("hubwatch_sync_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string SecretFile(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << content;
    return path;
  }
  config::SubscriptionConfig Entry(const std::string& url, const std::string& secret_file) {
    config::SubscriptionConfig e;
    e.url = url;
    e.secret_file = secret_file;
    return e;
  }

  std::filesystem::path dir_;
};

TEST_F(ConfigSync, LoadReadsAndChecksEveryEntry) {
  const std::string a = SecretFile("a", std::string("  ") + kSecretA + "\n");
  config::SubscriptionConfig e = Entry("https://hooks.example/a", a);
  e.repos = "google/*";
  e.kinds = {"chat_template"};
  e.min_impact = "breaking";
  Result<std::vector<Subscription>> loaded = LoadConfigSubscriptions({e}, {});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].secret, kSecretA);  // trimmed
  EXPECT_EQ((*loaded)[0].source, store::Source::kConfig);
  EXPECT_EQ((*loaded)[0].kinds, (std::vector<std::string>{"chat_template"}));
}

TEST_F(ConfigSync, LoadErrorsNameTheEntryAndNeverTheSecret) {
  const std::string good = SecretFile("good", kSecretA);
  const std::string weak = SecretFile("weak", "whsec_c2hvcnRzZWNyZXQ=");  // "shortsecret"
  const std::string raw = SecretFile("raw", "hunter2-hunter2-hunter2-hunter2");
  struct Case {
    std::vector<config::SubscriptionConfig> entries;
    config::WebhookConfig webhooks;
    std::string expect;
  };
  config::SubscriptionConfig bad_kind = Entry("https://b.example/", good);
  bad_kind.kinds = {"tokenizers"};
  config::WebhookConfig allow;
  allow.allow_private_targets = true;
  const std::vector<Case> cases = {
      {{Entry("https://a.example/", good), Entry("http://127.0.0.1:9/", good)},
       {},
       "subscriptions[1].url"},
      {{Entry("https://a.example/", good), Entry("https://a.example/", good)},
       allow,
       "subscriptions[1].url: another subscription has the same URL"},
      {{bad_kind}, {}, "subscriptions[0]: unknown change kind \"tokenizers\""},
      {{Entry("https://a.example/", (dir_ / "missing").string())},
       {},
       "subscriptions[0].secret_file: cannot read"},
      {{Entry("https://a.example/", weak)}, {}, "24 to 64 bytes"},
      {{Entry("https://a.example/", raw)}, {}, "must start with whsec_"},
      {{Entry("ftp://a.example/", good)}, allow, "http or https"},
  };
  for (const Case& c : cases) {
    Result<std::vector<Subscription>> r = LoadConfigSubscriptions(c.entries, c.webhooks);
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << r.error().message;
    for (const char* secret : {"MfKQ9r8GKYqr", "c2hvcnRzZWNyZXQ", "hunter2"}) {
      EXPECT_EQ(r.error().message.find(secret), std::string::npos) << r.error().message;
    }
  }
  // The same loopback target passes once private targets are allowed.
  EXPECT_TRUE(LoadConfigSubscriptions({Entry("http://127.0.0.1:9/", good)}, allow).ok());
}

TEST_F(ConfigSync, SyncAddsUpdatesRemovesAndLeavesApiSubscriptionsAlone) {
  auto s = OpenStore();
  SubscriptionMatcher matcher;
  const std::string a = SecretFile("a", kSecretA);
  const std::string b = SecretFile("b", kSecretB);
  Result<int64_t> api = s->outbox().AddSubscription(ApiSub("https://api.example/"));
  ASSERT_TRUE(api.ok());

  config::DaemonConfig config;
  config.subscriptions = {Entry("https://one.example/", a), Entry("https://two.example/", b)};
  // What a start or a reload does: load the entries, sync them, reset the matcher.
  auto sync = [&](int64_t now) {
    Result<std::vector<Subscription>> wanted =
        LoadConfigSubscriptions(config.subscriptions, config.webhooks);
    EXPECT_TRUE(wanted.ok()) << wanted.error().message;
    Result<SubscriptionSync> got = s->outbox().SyncConfigSubscriptions(*wanted, now);
    EXPECT_TRUE(got.ok()) << got.error().message;
    matcher.Reset(*s->outbox().ListSubscriptions());
    return got.ok() ? got.value() : SubscriptionSync{};
  };
  SubscriptionSync first = sync(1000);
  EXPECT_EQ(first.added, 2);
  EXPECT_EQ(matcher.size(), 3u);  // two from the config, one from the API
  Result<std::vector<Subscription>> all = s->outbox().ListSubscriptions();
  const int64_t one = (*all)[1].id;
  const int64_t two = (*all)[2].id;
  EXPECT_EQ((*all)[1].source, store::Source::kConfig);
  EXPECT_EQ((*all)[2].secret, kSecretB);

  // Unchanged on a second sync.
  SubscriptionSync second = sync(1100);
  EXPECT_EQ(second.unchanged, 2);
  EXPECT_EQ(second.added + second.updated + second.removed, 0);

  // A 410 disabled "one"; editing its entry re-enables it, in place, with its pending rows.
  AddAdvisory(*s, "a/b", Sha(3), {"subscription:" + std::to_string(one)}, 1150);
  ASSERT_TRUE(s->outbox().DisableSubscription(one, "the receiver answered 410 Gone", 1200).ok());
  EXPECT_EQ(StateOf(*s, one), "failed");
  AddAdvisory(*s, "a/b", Sha(4),
              {"subscription:" + std::to_string(one), "subscription:" + std::to_string(two)}, 1250);
  config.subscriptions[0].repos = "google/*";
  config.subscriptions.pop_back();  // "two" leaves the config
  SubscriptionSync third = sync(1300);
  EXPECT_EQ(third.updated, 1);
  EXPECT_EQ(third.removed, 1);
  Result<std::optional<Subscription>> got = s->outbox().GetSubscription(one);
  ASSERT_TRUE(got->has_value());
  EXPECT_FALSE((*got)->disabled_at.has_value());
  EXPECT_EQ((*got)->repos, "google/*");
  EXPECT_EQ((*got)->created_at, 1000);
  EXPECT_EQ(StateOf(*s, one), "failed,pending");
  EXPECT_FALSE(s->outbox().GetSubscription(two)->has_value());
  EXPECT_EQ(StateOf(*s, two), "failed");
  EXPECT_EQ((*s->outbox().ListDeliveries(two))[0].last_error, "subscription removed");
  EXPECT_TRUE(s->outbox().GetSubscription(*api)->has_value());
  EXPECT_EQ(matcher.size(), 2u);
}

}  // namespace
}  // namespace hubwatch::subscriptions
