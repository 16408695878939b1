#pragma once

// The config file's subscriptions, read and checked for the store (app::PrepareConfig), which
// makes them its config subscriptions at start and on reload
// (OutboxStore::SyncConfigSubscriptions). One subscription per URL: editing an entry updates it in
// place (pending deliveries keep going, and a subscription a 410 disabled is enabled again: the
// operator acted), removing it removes it (its pending deliveries fail). Subscriptions created
// through the API are left alone.

#include <vector>

#include "daemon/config/config.h"
#include "estimator/base/result.h"
#include "tracker/store/store.h"

namespace hubwatch::subscriptions {

// Each entry as the store keeps it: its secret_file read (surrounding whitespace trimmed) and
// parsed as a whsec_ secret, its URL checked by the target policy, its filters by
// CheckFilters, URLs unique. Errors name the entry ("subscriptions[1].secret_file: ...") and
// never the secret. Reads files; any thread.
Result<std::vector<store::Subscription>> LoadConfigSubscriptions(
    const std::vector<config::SubscriptionConfig>& entries, const config::WebhookConfig& webhooks);

}  // namespace hubwatch::subscriptions
