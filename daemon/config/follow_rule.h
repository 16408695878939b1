#pragma once

// A follow rule: the repos of an owner (or of the whole Hub above a threshold) that hubwatch
// tracks as they appear, read from the configuration's "follow" list or POST /api/v1/follows:
//
//   {"owner": "Qwen", "match": "Qwen3*", "pipeline_tag": "text-generation",
//    "library": "transformers", "tags": ["safetensors"], "min_downloads": 1000,
//    "min_likes": 10, "refs": ["main"], "backfill": false, "max_repos": 1000,
//    "name": "qwen3"}
//
// Only "owner" is needed; a rule without one (the top of the whole Hub) needs min_downloads or
// min_likes, so that its listing walk is bounded (read by downloads or likes, down to the
// threshold). "match" is a glob (* ? [..], case-insensitive) over the name after "owner/".
// pipeline_tag, library and tags are the Hub's own listing filters (sent as filter=, so the Hub
// does the filtering); the thresholds are the model's counts as the listing shows them. "name"
// defaults to the owner, then "/match" when there is one. Plain value types; pure functions.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/hub/hub_types.h"

namespace hubwatch::config {

struct FollowRule {
  std::string name;
  std::string owner;  // "": any owner (then a threshold is set)
  std::string match = "*";
  std::string pipeline_tag;  // "": any
  std::string library;       // "": any
  std::vector<std::string> tags;
  uint64_t min_downloads = 0;
  uint64_t min_likes = 0;
  std::vector<std::string> refs{"main"};
  bool backfill = false;     // the history of what it brings too (advisories of the past)
  int64_t max_repos = 1000;  // it brings at most this many (1..100000)
};

// Reads one rule; `where` names it in errors ("follow[2]", "the body"). InvalidInput on any
// unknown key or bad value.
Result<FollowRule> ParseFollowRule(const nlohmann::json& entry, const std::string& where);
// The rule as ParseFollowRule reads it (every key written).
nlohmann::json FollowRuleJson(const FollowRule& rule);

// Whether the listed model `m` is one `rule` brings (its owner, name glob, filters and
// thresholds; a filter or threshold the item does not show is not met).
bool FollowMatches(const FollowRule& rule, const hub::ModelSummary& m);

// The listing filters sent to the Hub for `rule` (filter= values: the Hub matches them against
// a model's tags, pipeline_tag and library_name).
std::vector<std::string> FollowListingFilters(const FollowRule& rule);

}  // namespace hubwatch::config
