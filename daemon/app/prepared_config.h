#pragma once

// PreparedConfig: a configuration `hubwatch serve` can run, with everything it names read and
// checked. PrepareConfig is the one validation of a start and of a reload (SIGHUP), so a reload
// accepts exactly what a start accepts; what follows it cannot fail for a reason the operator
// caused: WriteConfig changes the store in one transaction (all of it or none), and the service
// then applies the rest in memory.
//
// Which repos a configuration owns: those it lists, recorded with source "config". A start or a
// reload untracks (as DELETE /api/v1/repos does: the repo and its history) every repo recorded
// with source "config" that the configuration no longer lists. Repos added through the API
// (source "api") are never untracked by the configuration; listing one in the configuration
// makes it the configuration's.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "estimator/base/result.h"
#include "tracker/hub/hub_settings.h"
#include "tracker/store/store.h"

namespace hubwatch::app {

struct PreparedConfig {
  config::DaemonConfig config;
  hub::HubSettings hub;                            // endpoint and token (config, else environment)
  std::optional<std::string> admin_token;          // from admin_token_file
  std::optional<std::string> hub_webhook_secret;   // from hub.webhook_secret_file
  std::vector<store::Subscription> subscriptions;  // secrets read and parsed
};

// Checks `config` as a start needs it: `listen` an address, the store's directory present, the
// token, admin token and webhook secret files readable and well-formed, the webhook targets
// allowed. Errors are bad input and name the key. Reads files; any thread.
Result<PreparedConfig> PrepareConfig(config::DaemonConfig config);

// The keys that take effect only at a restart and whose values differ between the two, in
// config order ("listen", "store", "hub.endpoint", ...). Secrets are compared by content and
// named by their key, never shown.
std::vector<std::string> KeysNeedingRestart(const PreparedConfig& running,
                                            const PreparedConfig& next);

struct ConfigWrite {
  std::vector<std::string> untracked;                  // config repos no longer listed, removed
  std::vector<store::RepoSchedule> repos;              // every tracked repo after the write
  store::SubscriptionSync subscriptions;               // what changed among config subscriptions
  std::vector<store::Subscription> all_subscriptions;  // after the write
  std::vector<store::FollowRuleRecord> follow_rules;   // every follow rule after the write
  std::vector<std::string> follow_untracked;  // repos of config rules no longer listed
};

// Makes the store match `config` in one transaction: its repos added (or their refs updated)
// with source "config", the config repos it no longer lists removed, its subscriptions made the
// config subscriptions, its follow rules the config rules (the repos of a rule it no longer
// lists untracked, their history kept). On error nothing was written. REQUIRES: `writer` is the store thread's.
// `targets`: the subscriptions an untracked event of a removed rule goes to.
Result<ConfigWrite> WriteConfig(store::Store& writer, const PreparedConfig& config, int64_t now,
                                const store::FollowTargets& targets = {});

}  // namespace hubwatch::app
