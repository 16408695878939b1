#pragma once

// The config file's subscriptions, synced into the store at start and on reload (SIGHUP). One
// subscription per URL: editing an entry updates it in place (pending deliveries keep going,
// and a subscription a 410 disabled is enabled again: the operator acted), removing it removes
// it (its pending deliveries fail). Subscriptions created through the API are left alone.

#include <cstdint>
#include <functional>
#include <vector>

#include "daemon/config.h"
#include "daemon/service/store_access.h"
#include "daemon/subscriptions/matcher.h"
#include "estimator/result.h"
#include "tracker/store/store.h"

namespace hubwatch::subscriptions {

// Each entry as the store keeps it: its secret_file read (surrounding whitespace trimmed) and
// parsed as a whsec_ secret, its URL checked by the target policy, its filters by
// CheckFilters, URLs unique. Errors name the entry ("subscriptions[1].secret_file: ...") and
// never the secret. Reads files; any thread.
Result<std::vector<store::Store::Subscription>> LoadConfigSubscriptions(
    const std::vector<cli::SubscriptionConfig>& entries, const cli::WebhookConfig& webhooks);

// Loads them (nothing is written when any entry is invalid), makes them the store's config
// subscriptions in one Write, refreshes `matcher` from reads(), then calls `done` on the
// network thread. REQUIRES: called on the network thread; store and matcher outlive the call.
void SyncConfigSubscriptions(const cli::DaemonConfig& config, service::StoreAccess& store,
                             SubscriptionMatcher& matcher, int64_t now,
                             std::function<void(Result<store::Store::SubscriptionSync>)> done);

}  // namespace hubwatch::subscriptions
