#pragma once

// What follow rules read of the Hub's listing and what they take from it, as pure functions:
// the listing call that walks a rule (WalkOptions), and which listed repos the rules bring within
// their caps (SelectFollows). FollowWatch does the reading, the writing and the timing.
//
// A repo is one repo whatever the letter case of its id (the Hub resolves ids without regard to
// it): FoldedId is the identity a round counts, takes and refuses by.
//
// Thread safety: pure, but for the rules' refusals (`refused`, `capped`) SelectFollows updates.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/follow_rule.h"
#include "tracker/hub/client.h"
#include "tracker/store/follow_store.h"

namespace hubwatch::schedule {

// The most repos a rule's `refused` keeps (8 bytes each); beyond, `capped` stops growing.
inline constexpr size_t kMaxRefusedKept = 100000;

// A rule as the watch runs it: what it selects and what the store knows of it.
struct FollowState {
  config::FollowRule rule;
  int64_t walked_at = 0;  // 0: never walked
  int64_t tracked = 0;    // repos it brought that are tracked now (or being tracked)
  // The distinct repos it matched that its caps keep untracked now (refused.size()): those its
  // latest complete walk refused, and those listing rounds refused since; one it takes leaves.
  int64_t capped = 0;
  int64_t requests = 0;           // listing requests its walks made, since the start
  std::vector<uint64_t> refused;  // RefusalKey of each of those repos, sorted
  bool refused_by_total = false;  // the latest refusal was max_total's, not max_repos's
};

// The id in ASCII lower case: the identity of a repo (ids are ASCII).
std::string FoldedId(std::string_view id);
// The key a rule's `refused` holds for `id`: a 64-bit hash of FoldedId(id).
uint64_t RefusalKey(std::string_view id);

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
  int64_t capped = 0;  // repos a cap refused that their rule's `refused` did not hold before
  std::map<std::string, std::string> first_refused;  // rule name -> the first repo it refused
};

// The repos of `items` the rules bring (an id the Hub's rules refuse never; a listed sha that is
// not 40 hex digits is kept as ""), the first rule (in order) that matches a repo taking it
// unless `taken(id)` (tracked already, or being tracked); a rule at its max_repos, or all rules
// at `max_total`, refuses it (added to the rule's `refused`) and the next rule may take it. A
// repo listed again, or in other letters, counts once, as its first spelling. With `walk_rule`,
// `items` are that rule's complete walk: only that rule is considered and what it refuses
// replaces its `refused`. A rule's `tracked` counts the repos being tracked (FollowWatch adds
// them as it takes them).
FollowSelection SelectFollows(std::vector<FollowState>& rules,
                              const std::vector<hub::ModelSummary>& items,
                              const std::optional<std::string>& walk_rule, int64_t max_total,
                              const std::function<bool(const std::string& id)>& taken);

}  // namespace hubwatch::schedule
