#pragma once

// OutboxStore: webhook subscriptions and what became of their outbox rows. An outbox row goes
// to subscription N iff its target is "subscription:N"; ids are never reused. Removing or
// disabling a subscription fails its pending rows. Delivering them is DeliveryQueue's. Times
// are Unix seconds. Secrets are stored as given and never appear in errors.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database, which
// must outlive it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/diff/change.h"
#include "tracker/store/database.h"
#include "tracker/store/records.h"

namespace hubwatch::store {

struct Subscription {
  int64_t id = 0;  // set by the store
  std::string url{};
  std::string secret{};  // whsec_<base64>
  std::string repos = "*";
  std::vector<std::string> kinds{};  // change kind names; empty: every kind
  diff::Impact min_impact = diff::Impact::kBehavioral;
  // Also the advisories of changes committed before their repo was tracked (its history);
  // false: only what changes after tracking starts.
  bool backfill = false;
  Source source = Source::kApi;
  std::optional<int64_t> disabled_at{};
  std::string disabled_reason{};
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

struct SubscriptionSync {
  int added = 0;
  int updated = 0;
  int removed = 0;
  int unchanged = 0;
};

struct OutboxRow {
  int64_t id = 0;
  std::string advisory_id{};
  std::string target{};
  DeliveryState state = DeliveryState::kPending;
  int64_t attempts = 0;
  int64_t next_attempt_at = 0;
  std::string last_error{};
  std::optional<int64_t> last_status{};
  std::optional<int64_t> last_attempt_at{};
  std::optional<int64_t> delivered_at{};
  int64_t created_at = 0;
};

struct DeliveryTally {
  int64_t pending = 0;
  int64_t delivered = 0;
  int64_t failed = 0;
};

class OutboxStore {
 public:
  explicit OutboxStore(Database& db) : db_(db) {}

  // Inserts `s` (its id is ignored) and returns the new id.
  Result<int64_t> AddSubscription(const Subscription& s);
  Result<std::optional<Subscription>> GetSubscription(int64_t id);
  Result<std::vector<Subscription>> ListSubscriptions();  // by id
  // Deletes it; its pending deliveries become failed. false when there is no such id.
  Result<bool> RemoveSubscription(int64_t id, int64_t now);
  // Marks it disabled with `reason`; its pending deliveries become failed. false: no such id.
  Result<bool> DisableSubscription(int64_t id, const std::string& reason, int64_t now);
  // Makes the config subscriptions exactly `wanted`, matched by URL, in one transaction: new
  // URLs are added, changed ones updated (which re-enables a disabled one: the operator acted),
  // missing ones removed as by RemoveSubscription. API subscriptions are left alone.
  Result<SubscriptionSync> SyncConfigSubscriptions(const std::vector<Subscription>& wanted,
                                                   int64_t now);

  // The outbox rows of subscription `id`, oldest first.
  Result<std::vector<OutboxRow>> ListDeliveries(int64_t subscription_id);
  // Pending rows of enabled subscriptions (the delivery queue depth).
  Result<int64_t> CountPendingDeliveries();
  // Outbox rows per subscription id and state (subscriptions without rows are absent).
  Result<std::map<int64_t, DeliveryTally>> TallyDeliveries();

 private:
  // Both REQUIRE: inside a transaction.
  Status FailPendingOf(int64_t id, const std::string& reason, int64_t now);
  Result<bool> DeleteSubscription(int64_t id, int64_t now);

  Database& db_;
};

}  // namespace hubwatch::store
