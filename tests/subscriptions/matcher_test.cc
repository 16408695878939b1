#include "daemon/subscriptions/matcher.h"

#include <gtest/gtest.h>

#include <thread>

namespace hubwatch::subscriptions {
namespace {

using store::Store;
using store::Subscription;

Subscription Sub(int64_t id, std::string repos, std::vector<std::string> kinds = {},
                 diff::Impact min_impact = diff::Impact::kBehavioral) {
  Subscription s;
  s.id = id;
  s.url = "https://example.com/" + std::to_string(id);
  s.repos = std::move(repos);
  s.kinds = std::move(kinds);
  s.min_impact = min_impact;
  return s;
}

diff::Change Change(diff::ChangeKind kind, diff::Impact impact) {
  diff::Change c;
  c.kind = kind;
  c.impact = impact;
  return c;
}

using Targets = std::vector<std::string>;

TEST(Matcher, RepoGlobCrossesSlashesAndIgnoresCase) {
  SubscriptionMatcher m;
  m.Reset({Sub(1, "*"), Sub(2, "google/*"), Sub(3, "meta-llama/Llama-3.?-8B*"),
           Sub(4, "*/gemma-[0-9]*")});
  const diff::Change c = Change(diff::ChangeKind::kConfig, diff::Impact::kBehavioral);
  EXPECT_EQ(m.Targets("google/gemma-2-9b-it", c, /*history=*/false),
            (Targets{"subscription:1", "subscription:2", "subscription:4"}));
  EXPECT_EQ(m.Targets("Google/Gemma-2-9b-it", c, /*history=*/false),
            (Targets{"subscription:1", "subscription:2", "subscription:4"}));
  EXPECT_EQ(m.Targets("meta-llama/Llama-3.1-8B-Instruct", c, /*history=*/false),
            (Targets{"subscription:1", "subscription:3"}));
  EXPECT_EQ(m.Targets("mistralai/Mistral-7B", c, /*history=*/false), (Targets{"subscription:1"}));
}

TEST(Matcher, KindsAndMinimumImpactFilter) {
  SubscriptionMatcher m;
  m.Reset({Sub(1, "*", {"chat_template", "tokenizer"}), Sub(2, "*", {}, diff::Impact::kBreaking),
           Sub(3, "*", {}, diff::Impact::kCosmetic),
           Sub(4, "*", {"weights"}, diff::Impact::kBreaking)});
  EXPECT_EQ(m.Targets("a/b", Change(diff::ChangeKind::kChatTemplate, diff::Impact::kBehavioral),
                      /*history=*/false),
            (Targets{"subscription:1", "subscription:3"}));
  EXPECT_EQ(m.Targets("a/b", Change(diff::ChangeKind::kConfig, diff::Impact::kCosmetic),
                      /*history=*/false),
            (Targets{"subscription:3"}));
  EXPECT_EQ(m.Targets("a/b", Change(diff::ChangeKind::kWeights, diff::Impact::kBreaking),
                      /*history=*/false),
            (Targets{"subscription:2", "subscription:3", "subscription:4"}));
  EXPECT_EQ(m.Targets("a/b", Change(diff::ChangeKind::kTokenizer, diff::Impact::kCosmetic),
                      /*history=*/false),
            (Targets{"subscription:3"}));
}

TEST(Matcher, DisabledAndUnreadableSubscriptionsNeverMatch) {
  Subscription disabled = Sub(1, "*");
  disabled.disabled_at = 5;
  Subscription unknown_kinds = Sub(2, "*", {"no_such_kind"});
  SubscriptionMatcher m;
  m.Reset({disabled, unknown_kinds, Sub(4, "*")});
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.Targets("a/b", Change(diff::ChangeKind::kConfig, diff::Impact::kBreaking),
                      /*history=*/false),
            (Targets{"subscription:4"}));
}

TEST(Matcher, ResetSwapsTheWholeSetWhileOtherThreadsMatch) {
  SubscriptionMatcher m;
  m.Reset({Sub(1, "*")});
  auto fn = m.AsFunction();
  std::thread reader([&] {
    for (int i = 0; i < 2000; ++i) {
      const Targets t =
          fn("a/b", Change(diff::ChangeKind::kConfig, diff::Impact::kBreaking), /*history=*/false);
      ASSERT_TRUE(t == Targets{"subscription:1"} ||
                  t == (Targets{"subscription:2", "subscription:3"}));
    }
  });
  for (int i = 0; i < 200; ++i) {
    if (i % 2) {
      m.Reset({Sub(1, "*")});
    } else {
      m.Reset({Sub(2, "*"), Sub(3, "*")});
    }
  }
  reader.join();
}

TEST(Matcher, RefreshReadsTheStore) {
  Result<std::unique_ptr<Store>> s = Store::Open(":memory:");
  ASSERT_TRUE(s.ok());
  Subscription a = Sub(0, "google/*");
  a.secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  Result<int64_t> id = (*s)->outbox().AddSubscription(a);
  ASSERT_TRUE(id.ok());
  SubscriptionMatcher m;
  ASSERT_TRUE(m.Refresh(**s).ok());
  EXPECT_EQ(m.Targets("google/x", Change(diff::ChangeKind::kConfig, diff::Impact::kBreaking),
                      /*history=*/false),
            (Targets{SubscriptionTarget(*id)}));
}

TEST(Matcher, HistoryGoesOnlyToSubscriptionsThatAskForBackfill) {
  Result<std::unique_ptr<Store>> s = Store::Open(":memory:");
  ASSERT_TRUE(s.ok());
  Subscription news = Sub(0, "*");
  news.secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  Subscription history = news;
  history.url = "https://example.com/history";
  history.backfill = true;
  Result<int64_t> news_id = (*s)->outbox().AddSubscription(news);
  Result<int64_t> history_id = (*s)->outbox().AddSubscription(history);
  ASSERT_TRUE(news_id.ok() && history_id.ok());
  SubscriptionMatcher m;
  ASSERT_TRUE(m.Refresh(**s).ok());  // backfill is read back from the store
  const diff::Change c = Change(diff::ChangeKind::kConfig, diff::Impact::kBreaking);
  EXPECT_EQ(m.Targets("a/b", c, /*history=*/false),
            (Targets{SubscriptionTarget(*news_id), SubscriptionTarget(*history_id)}));
  EXPECT_EQ(m.Targets("a/b", c, /*history=*/true), (Targets{SubscriptionTarget(*history_id)}));
}

TEST(Matcher, CheckFiltersNamesWhatIsWrong) {
  EXPECT_TRUE(CheckFilters("google/*", {"config", "chat_template"}, "breaking").ok());
  EXPECT_FALSE(CheckFilters("", {}, "behavioral").ok());
  EXPECT_FALSE(CheckFilters(std::string(257, 'a'), {}, "behavioral").ok());
  EXPECT_FALSE(CheckFilters("google/[abc", {}, "behavioral").ok());
  EXPECT_FALSE(CheckFilters("goo gle/*", {}, "behavioral").ok());
  Status kind = CheckFilters("*", {"config", "tokenizers"}, "behavioral");
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().message.find("tokenizers"), std::string::npos);
  EXPECT_FALSE(CheckFilters("*", {}, "severe").ok());
}

}  // namespace
}  // namespace hubwatch::subscriptions
