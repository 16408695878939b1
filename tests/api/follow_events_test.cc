// Follow events on the stream and in the Atom feed: their frames, the stream position that
// carries both sequences, and the feed's merge by time.

#include <gtest/gtest.h>

#include "daemon/api/atom.h"
#include "daemon/api/sse.h"

namespace hubwatch::api {
namespace {

store::FollowEvent Tracked(int64_t seq, int64_t at) {
  return {seq, "Qwen/Qwen3-8B", "tracked", "Qwen", "0123456789abcdef0123456789abcdef01234567", "",
          at};
}

TEST(FollowEvents, StreamFramesCarryBothPositions) {
  const std::string e = SseFollowEvent(Tracked(7, 1'800'000'000), 42);
  EXPECT_EQ(e.rfind("id: 42.7\nevent: tracked\ndata: {", 0), 0u) << e;
  EXPECT_NE(e.find("\"repo\":\"Qwen/Qwen3-8B\""), std::string::npos);
  EXPECT_NE(e.find("\"at\":\"2027-01-15T08:00:00Z\""), std::string::npos) << e;
  store::AdvisoryRecord a;
  a.id = "x_HUBWATCH-0123456789abcdef";
  a.seq = 43;
  EXPECT_EQ(SseEvent(a, 7).rfind("id: 43.7\nevent: advisory\n", 0), 0u);
  EXPECT_EQ(SseEvent(a, 0).rfind("id: 43\n", 0), 0u);  // no follow event exists
  store::FollowEvent gone = Tracked(8, 1'800'000'000);
  gone.kind = "untracked";
  gone.reason = "no longer in the listing";
  EXPECT_EQ(SseFollowEvent(gone, 43).rfind("id: 43.8\nevent: untracked\n", 0), 0u);
}

TEST(FollowEvents, PositionsParseBackAndBadOnesAreRefused) {
  ASSERT_TRUE(ParseStreamPosition("42.7"));
  EXPECT_EQ(ParseStreamPosition("42.7")->advisory, 42);
  EXPECT_EQ(ParseStreamPosition("42.7")->follow, 7);
  EXPECT_EQ(ParseStreamPosition(" 42 ")->follow, 0);
  EXPECT_FALSE(ParseStreamPosition("42."));
  EXPECT_FALSE(ParseStreamPosition(".7"));
  EXPECT_FALSE(ParseStreamPosition("42.7.1"));
  EXPECT_FALSE(ParseStreamPosition("42.-7"));
}

TEST(FollowEvents, TheFeedMergesThemWithAdvisoriesByTimeUpToTheLimit) {
  store::AdvisoryRecord a;
  a.id = "x_HUBWATCH-aaaa";
  a.repo = "ns/name";
  a.kind = "config";
  a.published = a.modified = "2027-01-15T08:00:30Z";
  a.osv = {{"summary", "eos_token_id changed"}};
  AtomOptions options{.base_url = "http://127.0.0.1:1", .self_url = "http://127.0.0.1:1/feed",
                      .hub_url = "https://huggingface.co"};
  const std::vector<store::FollowEvent> follows = {Tracked(2, 1'800'000'060),
                                                   Tracked(1, 1'800'000'000)};
  const std::string feed = RenderAtomFeed({a}, options, follows, 2);
  const size_t newest = feed.find("<title>Tracked Qwen/Qwen3-8B (follow rule Qwen)</title>");
  const size_t advisory = feed.find("eos_token_id changed");
  ASSERT_NE(newest, std::string::npos) << feed;
  ASSERT_NE(advisory, std::string::npos);
  EXPECT_LT(newest, advisory);
  EXPECT_NE(feed.find("tag:hubwatch,2024:follow/2"), std::string::npos);
  EXPECT_EQ(feed.find("tag:hubwatch,2024:follow/1"), std::string::npos);  // over the limit
  EXPECT_NE(feed.find("<category term=\"tracked\""), std::string::npos);
  EXPECT_NE(feed.find("<updated>2027-01-15T08:01:00Z</updated>"), std::string::npos);
}

}  // namespace
}  // namespace hubwatch::api
