// Follow rules as the configuration and the admin API read them, and what they match in a
// listing.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "daemon/config/config.h"
#include "daemon/config/follow_rule.h"

namespace hubwatch::config {
namespace {

std::string ErrorOf(const std::string& text) {
  Result<DaemonConfig> c = ParseConfig(text, "");
  return c.ok() ? "" : c.error().message;
}

hub::ModelSummary Listed(const std::string& id) {
  hub::ModelSummary m;
  m.id = id;
  return m;
}

TEST(FollowRule, AnOwnerIsEnoughAndTheNameDefaultsToOwnerAndGlob) {
  Result<DaemonConfig> c =
      ParseConfig(R"({"follow": [{"owner": "Qwen"}, {"owner": "Qwen", "match": "Qwen3*"},
                                  {"min_downloads": 100000, "pipeline_tag": "text-generation"}],
                      "poll": {"max_followed_repos": 5000}})",
                  "");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->follow.size(), 3u);
  EXPECT_EQ(c->follow[0].name, "Qwen");
  EXPECT_EQ(c->follow[0].match, "*");
  EXPECT_EQ(c->follow[0].refs, std::vector<std::string>{"main"});
  EXPECT_FALSE(c->follow[0].backfill);
  EXPECT_EQ(c->follow[0].max_repos, 1000);
  EXPECT_EQ(c->follow[1].name, "Qwen/Qwen3*");
  EXPECT_EQ(c->follow[2].name, "*>=100000 downloads");
  EXPECT_EQ(c->poll.max_followed_repos, 5000);
  // What the store keeps reads back as the same rule.
  Result<FollowRule> again = ParseFollowRule(FollowRuleJson(c->follow[1]), "stored");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(FollowRuleJson(*again), FollowRuleJson(c->follow[1]));
}

TEST(FollowRule, BadRulesAreRefusedNamingTheKey) {
  EXPECT_NE(ErrorOf(R"({"follow": {"owner": "Qwen"}})").find("follow must be an array"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"follow": [{}]})").find("follow[0] needs an owner"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"follow": [{"owner": "Qwen", "ownr": 1}]})").find("ownr"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"follow": [{"owner": "a/b"}]})").find("follow[0].owner"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"follow": [{"owner": "Qwen", "match": "[Q"}]})").find("unclosed"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"follow": [{"owner": "Qwen", "max_repos": 0}]})")
                .find("follow[0].max_repos"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"follow": [{"owner": "Qwen", "tags": ["a b"]}]})")
                .find("follow[0].tags[]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"follow": [{"owner": "Qwen", "refs": ["bad..ref"]}]})")
                .find("follow[0].refs[]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"follow": [{"owner": "Qwen"}, {"owner": "Qwen"}]})")
                .find("a second rule named \"Qwen\""),
            std::string::npos);
}

TEST(FollowRule, MatchesTheOwnerTheGlobTheFiltersAndTheThresholds) {
  Result<FollowRule> r = ParseFollowRule(
      nlohmann::json::parse(R"({"owner": "qwen", "match": "Qwen3*", "pipeline_tag":
                              "text-generation", "tags": ["safetensors"], "min_likes": 10})"),
      "rule");
  ASSERT_TRUE(r.ok()) << r.error().message;
  hub::ModelSummary m = Listed("Qwen/Qwen3-8B");
  m.pipeline_tag = "text-generation";
  m.tags = {"safetensors", "transformers"};
  m.likes = 10;
  EXPECT_TRUE(FollowMatches(*r, m));  // owner and glob case-insensitive, like Hub ids
  hub::ModelSummary other = m;
  other.id = "Qwen/Qwen2.5-7B";
  EXPECT_FALSE(FollowMatches(*r, other));
  other = m;
  other.id = "NotQwen/Qwen3-8B";
  EXPECT_FALSE(FollowMatches(*r, other));
  other = m;
  other.likes = 9;
  EXPECT_FALSE(FollowMatches(*r, other));
  other = m;
  other.likes.reset();  // a count the listing does not show is not met
  EXPECT_FALSE(FollowMatches(*r, other));
  other = m;
  other.tags = {"transformers"};
  EXPECT_FALSE(FollowMatches(*r, other));
  other = m;
  other.pipeline_tag.reset();
  other.tags.push_back("text-generation");  // the Hub lists the pipeline among the tags too
  EXPECT_TRUE(FollowMatches(*r, other));
  EXPECT_EQ(FollowListingFilters(*r), (std::vector<std::string>{"text-generation", "safetensors"}));
}

}  // namespace
}  // namespace hubwatch::config
