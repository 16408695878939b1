#pragma once

// ServiceControl: what the HTTP API may ask of the running service, and see of it. Declared
// here, by the API that asks; implemented by app::Service, which assembles the API below it. The
// API holds a reference. Called on the network thread only.

#include <string>

#include "daemon/schedule/scheduler.h"
#include "tracker/store/records.h"

namespace hubwatch::api {

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
  // /readyz: the store is open, the listener bound and the scheduler running.
  virtual bool ready() const = 0;
  // One line: "watching 12 repos; 1 polling; last poll 14s ago; 0 errors" (PollLoop::StatusLine).
  virtual std::string status_line() const = 0;
};

}  // namespace hubwatch::api
