#pragma once

// FollowWatch: the follow rules at work. It brings the repos a rule matches in two ways:
//  - Offer: every page the change-hint listing reads (ListingHints), newest first down to its
//    watermark, is offered here; a repo no one tracks that a rule matches is tracked at once. So
//    a release of a followed owner is tracked within one listing interval. The listing reads the
//    rules' owners (owners()) besides the tracked repos' ones, or the Hub-wide feed, whichever
//    costs fewer requests (ListingLedger).
//  - Walk: a rule's whole listing (author=OWNER, the rule's filters sent as filter=, the longest
//    literal part of its glob as search=; a rule without an owner reads the Hub by downloads or
//    likes down to its threshold), when the rule is new and then once per reconcile interval. A
//    new rule brings what its owner published before; a complete walk also untracks the repos it
//    brought that two complete walks in a row did not show and no walk has shown matching for a
//    whole reconcile interval (renamed away, deleted, fallen below a threshold), their history
//    kept. One walk's miss untracks nothing: a flaky page, a listing not yet consistent.
// A repo is tracked from its head (a baseline: no advisory) unless its rule backfills; each one
// tracked or untracked is a follow event (stream, feed, subscriptions). A repo is one repo in
// any letter case: listed twice or in other letters it is counted and tracked once, and one
// tracked in other letters is not tracked again. Caps: a rule's max_repos and
// Options::max_total; a match over a cap is skipped and counted once per repo (FollowState's
// `capped`), and a rule's cap is logged when it starts leaving repos out and when it stops.
//
// Metrics: hubwatch_follow_tracked_total, hubwatch_follow_untracked_total,
// hubwatch_follow_capped_total, hubwatch_follow_walks_total{outcome},
// hubwatch_follow_requests_total.
//
// Thread safety: network thread only (the hub client's loop), like ListingHints. Ownership:
// borrows everything in Deps, which must outlive it; Stop() before they go.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/schedule/follow_listing.h"
#include "daemon/service/store_access.h"
#include "estimator/base/clock.h"
#include "tracker/hub/client.h"

namespace spdlog {
class logger;
}

namespace hubwatch::service {
class Metrics;
}

namespace hubwatch::schedule {

class FollowWatch {
 public:
  struct Options {
    int64_t reconcile_s = 21600;  // a rule's walk, and how long a repo may go unmatched
    int64_t max_total = 10000;    // repos all rules bring together
    int page_size = 1000;
    int max_pages = 200;  // per walk
  };
  struct Deps {
    TimerClock* clock = nullptr;
    std::shared_ptr<spdlog::logger> log;
    service::Metrics* metrics = nullptr;
    hub::HubClient* hub = nullptr;
    service::StoreAccess* store = nullptr;
    std::function<bool(const std::string& repo)> tracked;  // tracked now, by anyone
    // Repos newly tracked (their first poll is due), and repos untracked.
    std::function<void(const std::vector<std::string>& repos)> track;
    std::function<void(const std::vector<std::string>& repos)> untrack;
    std::function<void(int64_t requests)> spend;
    std::function<void()> announced;  // follow events were recorded
    store::FollowTargets targets;     // the subscriptions that asked for an event
  };

  FollowWatch(Deps deps, Options options);
  ~FollowWatch();

  // Starts the walk timer (the rules never walked walk first). REQUIRES: called once.
  void Start();
  void Stop();
  void SetOptions(Options options) { options_ = options; }
  // The rules now, with what the store knows of each (walked_at, tracked); a walk in flight for
  // a rule that went is dropped.
  void SetRules(std::vector<FollowState> rules);

  // One listing page's items: tracks those a rule brings.
  void Offer(const std::vector<hub::ModelSummary>& items);
  // The owners the rules name (for the listing rounds), and whether any rule needs an item's
  // filters or counts in the listing (expand pipeline_tag, library_name, tags, downloads, likes).
  std::vector<std::string> owners() const;
  bool needs_details() const;

  const std::vector<FollowState>& rules() const { return rules_; }

 private:
  struct Walk;
  void Arm(int64_t seconds);
  void Tick();
  void StartWalk(size_t index);
  void EndWalk(const std::shared_ptr<Walk>& walk,
               hub::HubResult<std::vector<hub::ModelSummary>> result, const hub::CallStats& stats);
  // Tracks the matches in one store write; `walk_rule`: after a complete walk of that rule,
  // records what it showed and missed and untracks what two walks in a row did not show.
  void TrackMatches(const std::vector<hub::ModelSummary>& items,
                    std::optional<std::string> walk_rule);
  // Whether a repo is tracked, or being tracked, in any letter case.
  bool Taken(const std::string& id);
  FollowState* Find(const std::string& name);

  Deps deps_;
  Options options_;
  std::vector<FollowState> rules_;
  std::set<std::string> pending_;  // FoldedId of the repos being tracked (a store write in flight)
  std::shared_ptr<Walk> walk_;  // the walk in flight; a reply for another one is dropped
  std::optional<TimerId> timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool stopped_ = false;
};

}  // namespace hubwatch::schedule
