#pragma once

// What follow rules read of the Hub's listing and what they take from it, as pure functions:
// the listing call that walks a rule (WalkOptions), and which listed repos the rules bring within
// their caps (SelectFollows). FollowWatch does the reading, the writing and the timing.
//
// Thread safety: pure, but for the rules' `capped` counts SelectFollows adds to.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "daemon/config/follow_rule.h"
#include "tracker/hub/client.h"
#include "tracker/store/follow_store.h"

namespace hubwatch::schedule {

// A rule as the watch runs it: what it selects and what the store knows of it.
struct FollowState {
  config::FollowRule rule;
  int64_t walked_at = 0;  // 0: never walked
  int64_t tracked = 0;    // repos it brought that are tracked now
  int64_t capped = 0;     // matches skipped over a cap, since the start
  int64_t requests = 0;   // listing requests its walks made, since the start
};

// The longest run of `glob` without a wildcard, when 2 characters or more: a substring every
// matching name holds, which the Hub's search= may narrow a walk with ("" otherwise).
std::string LiteralPart(const std::string& glob);

// A rule's whole listing: author=OWNER newest first, its filters as filter=, LiteralPart(match)
// as search=, every property a rule tests expanded; without an owner, the whole Hub by downloads
// (or likes) down to the threshold. At most `max_pages` pages of `page_size`.
hub::ListModelsOptions WalkOptions(const config::FollowRule& rule, int page_size, int max_pages);

struct FollowSelection {
  std::vector<store::FollowTrack> fresh;  // to track: matched, not taken, within the caps
  std::vector<std::string> matched;       // with `walk_rule`: every repo that rule matched
  int64_t capped = 0;                     // matches skipped over a cap
};

// The repos of `items` the rules bring (an id the Hub's rules refuse never; a listed sha that is
// not 40 hex digits is kept as ""), the first rule (in order) that matches a repo taking it
// unless `taken(id)` (tracked already, or being tracked); a rule at its max_repos, or all rules
// at `max_total`, skips it (counted in the rule's `capped`) and the next rule may take it. With
// `walk_rule`, only that rule is considered.
FollowSelection SelectFollows(std::vector<FollowState>& rules,
                              const std::vector<hub::ModelSummary>& items,
                              const std::optional<std::string>& walk_rule, int64_t max_total,
                              const std::function<bool(const std::string& id)>& taken);

}  // namespace hubwatch::schedule
