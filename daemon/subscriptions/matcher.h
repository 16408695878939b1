#pragma once

// SubscriptionMatcher: which subscriptions an advisory goes to, for
// pipeline::PollerOptions::outbox_targets. A subscription matches a change when it is enabled,
// its repo glob matches the repo id (fnmatch: * ? [..], '*' crosses '/', case-insensitive like
// Hub ids), its kinds list is empty or names the change's kind, and the change's impact is at
// least its min_impact, and the change is not history (committed before its repo was tracked)
// or the subscription asks for history (backfill). Targets are "subscription:<id>". A follow
// event ("tracked", "untracked": a follow rule brought or dropped a repo) goes only to the
// subscriptions whose kinds name it and whose glob matches the repo; kinds naming only follow
// events ask for no advisory.
//
// Thread safety: every method may be called from any thread; Reset swaps the whole set at once,
// so a call sees either the old set or the new one. The poller may call it on the store thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/diff/change.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/store.h"

namespace hubwatch::subscriptions {

// The follow events' kinds, as subscriptions name them.
inline constexpr char kTracked[] = "tracked";
inline constexpr char kUntracked[] = "untracked";

// The target string of subscription `id`.
std::string SubscriptionTarget(int64_t id);

// Checks the filter fields of a subscription: a glob of at most 256 printable ASCII characters
// with balanced brackets, known kind names, and min_impact cosmetic|behavioral|breaking.
Status CheckFilters(const std::string& repos, const std::vector<std::string>& kinds,
                    const std::string& min_impact);

class SubscriptionMatcher {
 public:
  // Replaces the set; disabled subscriptions are kept out.
  void Reset(const std::vector<store::Subscription>& subscriptions);
  // Reloads the set from the store. On error the previous set stays.
  Status Refresh(store::Store& reads);

  std::vector<std::string> Targets(const std::string& repo, const diff::Change& change,
                                   bool history) const;
  // The subscriptions (ids) a follow event of `kind` on `repo` goes to.
  std::vector<int64_t> FollowTargets(const std::string& repo, const std::string& kind) const;
  // For FollowStore's writes. REQUIRES: the matcher outlives the function.
  store::FollowTargets AsFollowTargets();
  // For PollerOptions::outbox_targets. REQUIRES: the matcher outlives the function.
  pipeline::OutboxTargets AsFunction();

  size_t size() const;

 private:
  struct Filter {
    int64_t id = 0;
    std::string repos;
    std::vector<diff::ChangeKind> kinds;
    diff::Impact min_impact = diff::Impact::kBehavioral;
    bool backfill = false;
    bool advisories = true;  // false: its kinds name follow events only
    bool tracked = false, untracked = false;
  };
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<Filter>> filters_ = std::make_shared<std::vector<Filter>>();
};

}  // namespace hubwatch::subscriptions
