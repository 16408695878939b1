#pragma once

// ServiceControl: what the HTTP API may ask of the running service, and see of it. Declared
// here, by the API that asks; implemented by app::Service, which assembles the API below it. The
// API holds a reference. Called on the network thread only.

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/schedule/scheduler.h"
#include "tracker/store/follow_store.h"
#include "tracker/store/records.h"

namespace hubwatch::api {

// What the running service knows of a follow rule beyond the store.
struct FollowRuntime {
  int64_t capped = 0;         // distinct repos it matches that its caps leave untracked now
  int64_t walk_requests = 0;  // requests its listing walks made, since the start
  // How the change-hint rounds read its owner's new repos: "owners" (its owner's listing, one
  // request a round), "feed" (the Hub-wide feed, shared by every rule and repo), or "" when
  // no round has run.
  std::string listing_mode;
};

class ServiceControl {
 public:
  virtual ~ServiceControl() = default;
  // The store already has the repo (the API wrote it): schedule it now.
  virtual void RepoAdded(const std::string& id) = 0;
  // The store no longer has it: stop scheduling it (an in-flight poll finishes harmlessly).
  virtual void RepoRemoved(const std::string& id) = 0;
  // A change hint (a Hub webhook) says `id` moved: poll it now, deduplicated.
  virtual schedule::Scheduler::HintOutcome Hint(const std::string& id,
                                                store::PollTrigger trigger) = 0;
  // The API changed the follow rules in the store: run the stored ones; `untracked`: the
  // repos of a rule it removed (untracked in the store already).
  virtual void FollowRulesChanged(const std::vector<std::string>& untracked) = 0;
  virtual FollowRuntime follow_runtime(const std::string& rule) const = 0;
  // The subscriptions that asked for a follow event (for the untracked events of a removal).
  virtual store::FollowTargets follow_targets() const = 0;
  // /readyz: the store is open, the listener bound and the scheduler running.
  virtual bool ready() const = 0;
  // One line: "watching 12 repos; 1 polling; last poll 14s ago; 0 errors" (PollLoop::StatusLine).
  virtual std::string status_line() const = 0;
};

}  // namespace hubwatch::api
