// Which derivatives a round follows when more are found than `max` (issue 28): ranked by what
// throwaway repos lack - downloads, likes, age - so that spam newer than the real derivatives
// takes only the places nothing else wants.

#include "tracker/derivatives/rank.h"

#include <gtest/gtest.h>

#include <limits>

namespace hubwatch::derivatives {
namespace {

Candidate C(std::string id, int64_t downloads, int64_t likes, std::string created,
            bool known = false) {
  return {std::move(id), Relation::kFinetune, {downloads, likes, std::move(created)}, known};
}

std::vector<std::string> Ids(const std::vector<Candidate>& list) {
  std::vector<std::string> ids;
  for (const Candidate& c : list) ids.push_back(c.id);
  return ids;
}

TEST(Rank, DownloadsThenLikesThenAgeThenKnownThenId) {
  const std::string old = "2024-04-18T05:41:09.000Z";
  const std::string young = "2026-05-01T10:00:00.000Z";
  std::vector<Candidate> candidates = {
      C("spam/b", 0, 0, young),           C("spam/a", 0, 0, young),
      C("real/quiet", 0, 0, old),         C("real/liked", 0, 5, young),
      C("real/used", 40, 0, young),       C("real/most-used", 48210, 96, old),
      C("spam/known", 0, 0, young, true), C("real/unknown-date", 0, 0, ""),
  };
  Ranking r = Rank(candidates, 5);
  EXPECT_EQ(Ids(r.kept), (std::vector<std::string>{"real/most-used", "real/used", "real/liked",
                                                   "real/unknown-date", "real/quiet"}));
  EXPECT_EQ(Ids(r.below), (std::vector<std::string>{"spam/known", "spam/a", "spam/b"}))
      << "at equal signals one followed before stays ahead of a new one";
  EXPECT_EQ(Rank(candidates, 100).kept.size(), candidates.size());
  EXPECT_TRUE(Rank(candidates, 100).below.empty());
  EXPECT_TRUE(Rank({}, 3).kept.empty());
}

TEST(Rank, ThousandSpamChildrenNewerThanTheRealOnesTakeNoPlaceTheRealOnesWant) {
  std::vector<Candidate> candidates;
  for (int i = 0; i < 1000; ++i) {
    candidates.push_back(C("throwaway-" + std::to_string(i % 97) + "/spam-" + std::to_string(i), 0,
                           0, "2026-05-01T10:00:00.000Z"));
  }
  const std::vector<std::string> real = {"a/gguf", "b/sft", "c/dpo", "d/lora", "e/merge", "f/tune"};
  for (size_t i = 0; i < real.size(); ++i) {
    candidates.push_back(C(real[i], static_cast<int64_t>(i) * 300, 0, "2024-04-18T00:00:00.000Z"));
  }
  Ranking r = Rank(candidates, 200);
  ASSERT_EQ(r.kept.size(), 200u);
  for (const std::string& id : real) {
    EXPECT_NE(
        std::find_if(r.kept.begin(), r.kept.end(), [&](const Candidate& c) { return c.id == id; }),
        r.kept.end())
        << id;
  }
  EXPECT_EQ(r.below.size(), 806u);
}

TEST(Rank, SignalsOfTheHubAreClampedAndOnlyAUtcTimeIsADate) {
  EXPECT_EQ(SignalsOf(12, 3, "2024-04-18T05:41:09.000Z"),
            (Signals{12, 3, "2024-04-18T05:41:09.000Z"}));
  EXPECT_EQ(SignalsOf(std::nullopt, std::nullopt, std::nullopt), (Signals{0, 0, ""}));
  EXPECT_EQ(SignalsOf(std::numeric_limits<uint64_t>::max(), 1, "2024-04-18T05:41:09Z").downloads,
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(SignalsOf(0, 0, "2024-04-18T05:41:09Z").created_at, "2024-04-18T05:41:09Z");
  // Upstream's words never reach a log line or the store unless they are a plain time: one that
  // sorts before every real date ("0000...", "!") would buy the oldest rank.
  for (const char* bad : {"", "yesterday", "2024-04-18 05:41:09Z", "2024-04-18T05:41:09+02:00",
                          "2024-04-18T05:41:09.Z", "2024-04-18T05:41:09.000Z\n",
                          "!024-04-18T05:41:09.000Z", "2024-04-18T05:41:09.0000000000000000Z"}) {
    EXPECT_EQ(SignalsOf(0, 0, std::string(bad)).created_at, "") << bad;
  }
}

TEST(Rank, TheDetailSaysWhereItRankedAndWhatTheLastKeptHad) {
  EXPECT_EQ(RankedOutDetail(C("spam/a", 0, 0, "2026-05-01T10:00:00.000Z"), 201, 1006, 200,
                            C("real/b", 12, 3, "2024-04-18T05:41:09.000Z")),
            "ranked 201st of 1006 for 200 places: 0 downloads, 0 likes, created "
            "2026-05-01T10:00:00.000Z; the last kept has 12 downloads, 3 likes, created "
            "2024-04-18T05:41:09.000Z");
  EXPECT_NE(
      RankedOutDetail(C("x/y", 0, 0, ""), 212, 300, 200, C("x/z", 1, 0, ""))
          .find("ranked 212th of 300 for 200 places: 0 downloads, 0 likes, created at an unknown "
                "date"),
      std::string::npos);
  EXPECT_NE(RankedOutDetail(C("x/y", 0, 0, ""), 3, 3, 2, C("x/z", 1, 0, "")).find("3rd"),
            std::string::npos);
  EXPECT_NE(RankedOutDetail(C("x/y", 0, 0, ""), 113, 300, 2, C("x/z", 1, 0, "")).find("113th"),
            std::string::npos);
}

TEST(Rank, EvictionReasonsHaveStableNames) {
  for (EvictionReason r : {EvictionReason::kRankedOut, EvictionReason::kUnlisted,
                           EvictionReason::kNotFound, EvictionReason::kUntagged}) {
    EXPECT_EQ(ParseEvictionReason(EvictionReasonName(r)), r);
  }
  EXPECT_EQ(EvictionReasonName(EvictionReason::kRankedOut), "ranked_out");
  EXPECT_FALSE(ParseEvictionReason("gone").has_value());
}

}  // namespace
}  // namespace hubwatch::derivatives
