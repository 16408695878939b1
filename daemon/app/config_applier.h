#pragma once

// ConfigApplier: a configuration applied to the running service, at the start and on every
// reload (Reloader's ReloadTarget). Its store changes are written on the store thread first
// (repos added and untracked, subscriptions; WriteConfig), then the rest follows in memory and
// cannot fail: the scheduler's and the poller's options, the repos tracked and untracked, the
// webhooks' subscriptions, and the background reads the configuration asks for (the change-hint
// listing, the follow rules' watch, the derivative rounds), started, renewed or stopped. It owns
// what the configuration makes: the poller (one object for the service's life; running polls
// keep their options), the listing, the follow watch and the derivatives' watch.
//
// Thread safety: the network thread. Ownership: borrows everything in Parts, which must outlive
// it; owns the poller, the listing and the watches.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/api/service_control.h"
#include "daemon/app/loop_control.h"
#include "daemon/app/poll_wiring.h"
#include "daemon/app/reloader.h"
#include "daemon/subscriptions/webhooks.h"

namespace hubwatch::app {

class ConfigApplier final : public ReloadTarget {
 public:
  struct Parts {
    const Clock* clock = nullptr;
    TimerClock* timers = nullptr;
    std::shared_ptr<spdlog::logger> log;
    service::Metrics* metrics = nullptr;
    schedule::PollLoop* loop = nullptr;
    service::ThreadedStoreAccess* store = nullptr;
    hub::HubClient* hub = nullptr;
    subscriptions::Webhooks* webhooks = nullptr;
    LoopControl* control = nullptr;
    bool has_token = false;
    std::function<void()> published;  // a derivative round stored lags, or follow events
  };
  explicit ConfigApplier(Parts parts) : p_(std::move(parts)) {}

  // ReloadTarget: the store write (`done` runs on this thread with its status, `wrote` filled
  // when it is ok)...
  void WriteToStore(const PreparedConfig& config, std::shared_ptr<ConfigWrite> wrote,
                    std::function<void(Status)> done) override;
  // ...and what follows it, in memory.
  void Apply(const PreparedConfig& config, const ConfigWrite& wrote) override;
  bool stopping() const override { return p_.control->stopping(); }
  std::string status_line() const override { return p_.control->status_line(); }

  // The listing hint and the derivatives' watch as `config` says (started, renewed, stopped).
  // The start calls it once the loop runs; reloads (Apply) after that.
  void StartBackgroundReads(const config::DaemonConfig& config);
  void StopBackgroundReads();
  // The API changed the follow rules in the store: the watch runs the stored ones now, the
  // repos of a removed rule (`untracked`) are dropped, and the listing runs if a rule needs it.
  void FollowRulesChanged(const std::vector<std::string>& untracked);
  // What this run knows of follow rule `rule` (zeros before the background reads start).
  api::FollowRuntime FollowRuntime(const std::string& rule) const;
  // REQUIRES: Apply ran.
  pipeline::Poller& poller() { return *poller_; }

 private:
  ListingParts Listing() const;
  // The follow rules' watch and the listing, as `config` and the stored rules say.
  void ApplyFollowAndListing(const config::DaemonConfig& config);
  void Untrack(const std::vector<std::string>& repos, const char* why);

  Parts p_;
  // The polling part of the configuration applied last (not all of it: its repos list is the
  // largest thing the daemon holds at 100,000 repos).
  std::optional<config::PollConfig> poll_;
  std::vector<store::FollowRuleRecord> follow_rules_;  // as the last write left them
  std::unique_ptr<pipeline::Poller> poller_;
  std::unique_ptr<schedule::ListingHints> listing_;
  std::unique_ptr<schedule::DerivativeWatch> derivatives_;
  std::unique_ptr<schedule::FollowWatch> follow_;
};

}  // namespace hubwatch::app
