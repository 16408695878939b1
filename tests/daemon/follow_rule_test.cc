// Follow rules as the configuration and the admin API read them, and what they match in a
// listing.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "daemon/config/config.h"
#include "daemon/config/follow_rule.h"
#include "daemon/schedule/follow_listing.h"

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

TEST(FollowRule, EveryRuleAcceptedReadsBackFromWhatTheStoreKeeps) {
  // The store keeps FollowRuleJson and the service reads it with ParseFollowRule: a name made
  // for a rule (spaces in a threshold's, an owner and the longest glob) must pass the same check
  // as a name given, or the rule is accepted and then never runs.
  const std::string owner(96, 'o');
  const std::string glob = std::string(254, 'g') + "*";
  for (const std::string& body :
       {std::string(R"({"min_downloads": 1000})"), std::string(R"({"min_likes": 10})"),
        R"({"owner": ")" + owner + R"(", "match": ")" + glob + R"("})",
        std::string(R"({"name": "my rule: Qwen3 >= 1k", "owner": "Qwen"})")}) {
    SCOPED_TRACE(body);
    Result<FollowRule> rule = ParseFollowRule(nlohmann::json::parse(body), "the body");
    ASSERT_TRUE(rule.ok()) << rule.error().message;
    Result<FollowRule> again = ParseFollowRule(FollowRuleJson(*rule), "follow rule " + rule->name);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(FollowRuleJson(*again), FollowRuleJson(*rule));
  }
  for (const char* bad :
       {R"({"name": "", "owner": "Qwen"})", R"({"name": " x", "owner": "Qwen"})",
        R"({"name": "a\u0007b", "owner": "Qwen"})", R"({"name": "a\u202eb", "owner": "Qwen"})"}) {
    Result<FollowRule> rule = ParseFollowRule(nlohmann::json::parse(bad), "the body");
    ASSERT_FALSE(rule.ok()) << bad;
    EXPECT_NE(rule.error().message.find("the body.name"), std::string::npos);
  }
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

FollowRule Rule(const std::string& json) {
  Result<FollowRule> r = ParseFollowRule(nlohmann::json::parse(json), "rule");
  EXPECT_TRUE(r.ok()) << json;
  return r.ok() ? *r : FollowRule{};
}

TEST(FollowListing, AWalkNarrowsWithTheHubsOwnFiltersAndTheGlobsLiteralPart) {
  hub::ListModelsOptions o = schedule::WalkOptions(
      Rule(R"({"owner": "Qwen", "match": "Qwen3-*-Instruct", "library": "transformers"})"), 500,
      4);
  EXPECT_EQ(o.author, "Qwen");
  EXPECT_EQ(o.search, "-Instruct");  // the longest literal run
  EXPECT_EQ(o.filter, std::vector<std::string>{"transformers"});
  EXPECT_EQ(o.sort, "lastModified");
  EXPECT_EQ(o.max_results, 2000u);
  EXPECT_FALSE(o.last_wanted);
  EXPECT_EQ(schedule::LiteralPart("*"), "");
  EXPECT_EQ(schedule::LiteralPart("a[bc]d*"), "");  // no run of 2
  EXPECT_EQ(schedule::LiteralPart("gemma-[23]*"), "gemma-");
  // The whole Hub: by downloads, down to the threshold.
  o = schedule::WalkOptions(Rule(R"({"min_downloads": 1000})"), 1000, 50);
  EXPECT_EQ(o.author, "");
  EXPECT_EQ(o.sort, "downloads");
  hub::ModelSummary m = Listed("a/b");
  m.downloads = 1000;
  EXPECT_FALSE(o.last_wanted(m));
  m.downloads = 999;
  EXPECT_TRUE(o.last_wanted(m));
}

TEST(FollowListing, TheFirstMatchingRuleWithRoomTakesARepoAndCapsAreCounted) {
  std::vector<schedule::FollowState> rules = {
      {.rule = Rule(R"({"owner": "acme", "match": "big-*", "max_repos": 1})"), .tracked = 0},
      {.rule = Rule(R"({"owner": "acme", "name": "all", "backfill": true})"), .tracked = 0}};
  std::vector<hub::ModelSummary> items = {Listed("acme/big-1"), Listed("acme/big-2"),
                                          Listed("acme/small"), Listed("acme/taken"),
                                          Listed("other/big-3"), Listed("acme/big-..\x1b[2J")};
  items[0].sha = "0123456789abcdef0123456789abcdef01234567";
  items[1].sha = "<script>";  // upstream's text: not a sha
  schedule::FollowSelection s = schedule::SelectFollows(
      rules, items, std::nullopt, 100, [](const std::string& id) { return id == "acme/taken"; });
  ASSERT_EQ(s.fresh.size(), 3u);
  EXPECT_EQ(s.fresh[0].repo, "acme/big-1");
  EXPECT_EQ(s.fresh[0].rule, "acme/big-*");
  EXPECT_TRUE(s.fresh[0].baseline);
  EXPECT_EQ(s.fresh[0].sha, "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(s.fresh[1].sha, "");
  EXPECT_EQ(s.fresh[1].repo, "acme/big-2");  // over the first rule's cap: the second takes it
  EXPECT_EQ(s.fresh[1].rule, "all");
  EXPECT_FALSE(s.fresh[1].baseline);  // "backfill": its history too
  EXPECT_EQ(s.fresh[2].repo, "acme/small");
  EXPECT_EQ(s.capped, 1);
  EXPECT_EQ(rules[0].capped, 1);
  EXPECT_TRUE(s.matched.empty());
  // The overall cap; and a walk of one rule lists what it matched, taken or not.
  schedule::FollowSelection walk = schedule::SelectFollows(
      rules, items, "all", 2, [](const std::string& id) { return id == "acme/taken"; });
  ASSERT_EQ(walk.fresh.size(), 2u);
  EXPECT_EQ(walk.matched.size(), 4u);
  EXPECT_EQ(walk.capped, 1);  // acme/small
}

TEST(FollowListing, ARepoListedTwiceOrInOtherLettersIsCountedAndTakenOnceAsFirstSpelled) {
  // The Hub resolves ids without regard to letter case: Acme/Model and acme/model are one repo.
  std::vector<schedule::FollowState> rules = {
      {.rule = Rule(R"({"owner": "acme", "max_repos": 2})"), .tracked = 0}};
  std::vector<hub::ModelSummary> items = {Listed("acme/Model"), Listed("acme/model"),
                                          Listed("acme/Model"), Listed("ACME/MODEL"),
                                          Listed("acme/other"), Listed("acme/Other"),
                                          Listed("acme/third"), Listed("acme/THIRD")};
  std::vector<std::string> asked;
  schedule::FollowSelection s =
      schedule::SelectFollows(rules, items, std::nullopt, 100, [&](const std::string& id) {
        asked.push_back(id);
        return false;
      });
  ASSERT_EQ(s.fresh.size(), 2u);
  EXPECT_EQ(s.fresh[0].repo, "acme/Model");  // the first spelling seen
  EXPECT_EQ(s.fresh[1].repo, "acme/other");
  EXPECT_EQ(asked, (std::vector<std::string>{"acme/Model", "acme/other", "acme/third"}));
  EXPECT_EQ(s.capped, 1);  // acme/third, once in either spelling
  EXPECT_EQ(rules[0].capped, 1);
  // A walk lists each repo it matched once.
  schedule::FollowSelection walk = schedule::SelectFollows(
      rules, items, "acme", 100, [](const std::string&) { return true; });
  EXPECT_EQ(walk.matched, (std::vector<std::string>{"acme/Model", "acme/other", "acme/third"}));
  EXPECT_TRUE(walk.fresh.empty());
}

TEST(FollowListing, CappedCountsTheDistinctReposACapLeavesOutNotTheRoundsThatSawThem) {
  std::vector<schedule::FollowState> rules = {
      {.rule = Rule(R"({"owner": "acme", "max_repos": 1})"), .tracked = 1}};
  const std::vector<hub::ModelSummary> items = {Listed("acme/a"), Listed("acme/b"),
                                                Listed("acme/c")};
  auto none = [](const std::string&) { return false; };
  schedule::FollowSelection first = schedule::SelectFollows(rules, items, std::nullopt, 100, none);
  EXPECT_EQ(first.capped, 3);
  EXPECT_EQ(first.first_refused.at("acme"), "acme/a");
  for (int round = 0; round < 5; ++round) {  // listing rounds and walks that show them again
    EXPECT_EQ(schedule::SelectFollows(rules, items, std::nullopt, 100, none).capped, 0);
    EXPECT_EQ(schedule::SelectFollows(rules, items, "acme", 100, none).capped, 0);
  }
  EXPECT_EQ(rules[0].capped, 3);
  EXPECT_FALSE(rules[0].refused_by_total);
  // A complete walk says what is left out now: acme/c is gone, acme/d is new.
  schedule::FollowSelection walk = schedule::SelectFollows(
      rules, {Listed("acme/A"), Listed("acme/b"), Listed("acme/d")}, "acme", 100, none);
  EXPECT_EQ(walk.capped, 1);
  EXPECT_EQ(rules[0].capped, 3);
  // Room again (max_repos raised): what it takes leaves the count; the overall cap refuses too.
  rules[0].rule.max_repos = 3;
  schedule::FollowSelection room =
      schedule::SelectFollows(rules, {Listed("acme/a"), Listed("acme/b")}, std::nullopt, 2, none);
  ASSERT_EQ(room.fresh.size(), 1u);
  EXPECT_EQ(room.fresh[0].repo, "acme/a");
  EXPECT_EQ(rules[0].capped, 2);  // acme/b and acme/d still left out
  EXPECT_TRUE(rules[0].refused_by_total);
  rules[0].rule.max_repos = 10;
  schedule::SelectFollows(rules, {Listed("acme/b"), Listed("acme/d")}, "acme", 100, none);
  EXPECT_EQ(rules[0].capped, 0);
}

}  // namespace
}  // namespace hubwatch::config
