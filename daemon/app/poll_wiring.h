#pragma once

// What the service's polling is built from: the scheduler's and the poller's options from the
// configuration, and the change-hint listing wired to the service's parts (the poll loop: what is
// tracked, where hints go, the budget; the store: stored heads, the watermark; the hub client).
//
// Thread safety: the network thread. Ownership: borrows everything in ListingParts, which must
// outlive the ListingHints it makes.

#include <memory>
#include <optional>

#include "daemon/config/config.h"
#include "daemon/schedule/derivative_watch.h"
#include "daemon/schedule/follow_watch.h"
#include "daemon/schedule/listing_hints.h"
#include "daemon/schedule/poll_loop.h"
#include "daemon/service/store_access.h"
#include "tracker/pipeline/poller.h"

namespace hubwatch::app {

struct ListingParts {
  TimerClock* clock = nullptr;  // the service's time and timers
  std::shared_ptr<spdlog::logger> log;
  service::Metrics* metrics = nullptr;
  hub::HubClient* hub = nullptr;
  service::ThreadedStoreAccess* store = nullptr;
  schedule::PollLoop* loop = nullptr;
  schedule::FollowWatch* follow = nullptr;  // the follow rules the listing feeds; may be null
};

// The Hub client's options: the settings the start read, the safetensors header cap, its lines
// in `log` (debug).
hub::HubClientOptions HubClientOptionsFor(const config::DaemonConfig& config,
                                          const hub::HubSettings& settings,
                                          std::shared_ptr<spdlog::logger> log);

// 80% of the Hub's documented API quota (per 5 minutes): 500 anonymous, 1000 with a token.
inline int64_t DefaultQuota(bool has_token) { return has_token ? 800 : 400; }

schedule::SchedulerOptions SchedulerOptionsFor(const config::DaemonConfig& config, bool has_token);

// The poller's options: its heavy work and its writes on the store thread, its lines in `log`.
pipeline::PollerOptions PollerOptionsFor(const config::DaemonConfig& config, const Clock& clock,
                                         service::ThreadedStoreAccess& store,
                                         std::shared_ptr<spdlog::logger> log);

// The listing's options in `config`.
schedule::ListingHints::Options ListingOptions(const config::DaemonConfig& config);

// A ListingHints reading on from the watermark stored by a previous run; not started.
std::unique_ptr<schedule::ListingHints> MakeListingHints(const config::DaemonConfig& config,
                                                        const ListingParts& parts);

// Starts, renews or stops the listing as `config` says: it runs while hints are on or a follow
// rule exists (a reload may turn hints on or off; a round in flight is then dropped).
void ApplyListing(std::unique_ptr<schedule::ListingHints>& listing,
                  const config::DaemonConfig& config, const ListingParts& parts);

// The follow rules' watch (not started): repos it tracks are scheduled at once, those it
// untracks dropped, its requests spent from the scheduler's budget, `announced` after events.
std::unique_ptr<schedule::FollowWatch> MakeFollowWatch(const config::DaemonConfig& config,
                                                      const ListingParts& parts,
                                                      std::function<void()> announced,
                                                      store::FollowTargets targets);
schedule::FollowWatch::Options FollowOptions(const config::DaemonConfig& config);

// The stored rules as the watch runs them; a rule whose stored spec does not read is logged and
// left out.
std::vector<schedule::FollowState> FollowStates(const std::vector<store::FollowRuleRecord>& rules,
                                                spdlog::logger& log);

// Makes the derivatives' watch when a repo first asks for it (rounds only while the loop has no
// poll due or running, requests spent from its budget, derivative advisories queued for
// `targets`, `published` after each round); renews its repos and options on every call.
void ApplyDerivatives(std::unique_ptr<schedule::DerivativeWatch>& watch,
                      const config::DaemonConfig& config, const ListingParts& parts,
                      store::DerivativeTargets targets, std::function<void()> published);

}  // namespace hubwatch::app
