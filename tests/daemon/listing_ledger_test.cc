#include "daemon/schedule/listing_ledger.h"

#include <gtest/gtest.h>

namespace hubwatch::schedule {
namespace {

std::vector<std::string> Ids(const std::vector<ListedModel>& models) {
  std::vector<std::string> ids;
  for (const ListedModel& m : models) ids.push_back(m.id);
  return ids;
}

TEST(ListingLedger, ATrackedRepoIsACandidateOnlyWhenItsListedShaIsNew) {
  ListingLedger ledger({.page_size = 100, .overlap_s = 60});
  ledger.SetTracked({"a/one", "a/two", "b/three"});
  EXPECT_EQ(ledger.owners(), 2u);
  const std::vector<ListedModel> page = {
      {"x/untracked", "s0", 1000}, {"a/one", "s1", 990}, {"b/three", "s3", 980}};
  EXPECT_EQ(Ids(ledger.Consume("", page)), (std::vector<std::string>{"a/one", "b/three"}));
  // The same shas again, as an overlapping read shows them: nothing new.
  EXPECT_TRUE(ledger.Consume("a", {{"a/one", "s1", 990}}).empty());
  EXPECT_EQ(Ids(ledger.Consume("a", {{"a/one", "s1b", 1005}})), std::vector<std::string>{"a/one"});
  // An untracked repo is never a candidate; a repo no longer tracked is forgotten.
  ledger.SetTracked({"a/one"});
  EXPECT_TRUE(ledger.Consume("", {{"b/three", "s4", 1010}}).empty());
}

TEST(ListingLedger, ReadsGoDownToTheWatermarkLessTheOverlapAndMoveItOnlyWhenComplete) {
  ListingLedger ledger({.page_size = 100, .overlap_s = 60});
  ledger.SetTracked({"a/one"});
  EXPECT_TRUE(ledger.LastWanted(123456));  // no watermark: one page
  ledger.Consume("a", {{"a/one", "s1", 5000}, {"a/two", "s2", 4000}});
  ledger.EndRound(true);
  ASSERT_EQ(ledger.watermark(), 5000);
  EXPECT_FALSE(ledger.LastWanted(4941));
  EXPECT_TRUE(ledger.LastWanted(4940));
  ledger.Consume("a", {{"a/one", "s9", 7000}});
  ledger.EndRound(false);  // a source failed: read again from the old watermark
  EXPECT_EQ(ledger.watermark(), 5000);
  ledger.Consume("a", {{"a/one", "s9", 7000}});
  ledger.EndRound(true);
  EXPECT_EQ(ledger.watermark(), 7000);
  ledger.RestoreWatermark(9000);
  EXPECT_EQ(ledger.watermark(), 9000);
}

TEST(ListingLedger, PlansTheFeedWhenItCostsFewerRequestsThanTheOwners) {
  ListingLedger ledger({.page_size = 1000, .overlap_s = 60, .probe_every = 3});
  std::vector<std::string> repos;
  for (int i = 0; i < 50; ++i) repos.push_back("owner-" + std::to_string(i) + "/m");
  ledger.SetTracked(repos);
  // Unknown rate: the owners, and the feed's first page as a probe.
  ListingRound first = ledger.Plan(900);
  EXPECT_EQ(first.mode, ListingMode::kOwners);
  EXPECT_EQ(first.sources.size(), 51u);
  EXPECT_EQ(first.sources.back(), "");
  // A feed page of 1000 changes over 200 s: 5 a second, 4,500 per 900 s: 5 pages < 50 owners.
  std::vector<ListedModel> page;
  for (int i = 0; i < 1000; ++i) page.push_back({"bg/m" + std::to_string(i), "s", 10'000 - i / 5});
  ledger.Consume("", page);
  EXPECT_NEAR(*ledger.feed_rate(), 5.0, 0.05);
  ListingRound feed = ledger.Plan(900);
  EXPECT_EQ(feed.mode, ListingMode::kFeed);
  EXPECT_EQ(feed.sources, std::vector<std::string>{""});
  EXPECT_EQ(feed.feed_cost, 5);
  EXPECT_EQ(feed.owners_cost, 50);
  // At a 15,000 s interval the feed would need 75 pages: the owners win, and the feed's rate is
  // probed again every third round.
  ListingRound owners = ledger.Plan(15'000);
  EXPECT_EQ(owners.mode, ListingMode::kOwners);
  EXPECT_EQ(owners.sources.size(), 50u);
  EXPECT_EQ(ledger.Plan(15'000).sources.size(), 50u);
  EXPECT_EQ(ledger.Plan(15'000).sources.size(), 51u);
}

TEST(ListingLedger, OneOwnerIsReadAloneAndTheFeedRateComesFromAReadDownToTheWatermark) {
  ListingLedger ledger({.page_size = 1000, .overlap_s = 10});
  ledger.SetTracked({"solo/a", "solo/b"});
  ListingRound r = ledger.Plan(60);
  EXPECT_EQ(r.sources, std::vector<std::string>{"solo"});  // no probe: nothing can cost less
  ledger.RestoreWatermark(1000);
  // 30 changes in the 100 s above the watermark, and the items read below it.
  std::vector<ListedModel> feed;
  for (int i = 0; i < 30; ++i) feed.push_back({"bg/" + std::to_string(i), "s", 1100 - i * 3});
  feed.push_back({"bg/old", "s", 985});
  ledger.Consume("", feed);
  EXPECT_NEAR(*ledger.feed_rate(), 0.3, 1e-9);
}

}  // namespace
}  // namespace hubwatch::schedule
