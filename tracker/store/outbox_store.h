#pragma once

// OutboxStore: webhook subscriptions and the delivery state of their outbox rows. An outbox row
// goes to subscription N iff its target is "subscription:N"; ids are never reused. Times are
// Unix seconds. Secrets are stored as given and never appear in errors.
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

// A pending outbox row of an enabled subscription, with what delivering it needs.
struct Delivery {
  int64_t outbox_id = 0;
  std::string advisory_id{};
  std::string target{};
  int64_t subscription_id = 0;
  std::string url{};
  std::string secret{};
  std::string body{};  // the advisory's OSV JSON, as stored
  int64_t attempts = 0;
  int64_t created_at = 0;
  int64_t next_attempt_at = 0;
};

enum class DeliveryOutcome { kDelivered, kRetry, kFailed };

struct DeliveryAttempt {
  int64_t outbox_id = 0;
  int64_t at = 0;
  std::optional<int> status{};  // the HTTP status, when a response came
  std::string error{};          // why it did not count as delivered
  DeliveryOutcome outcome = DeliveryOutcome::kRetry;
  int64_t next_attempt_at = 0;  // kRetry only
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

  // Up to `limit` pending rows of enabled subscriptions with next_attempt_at <= now, earliest
  // due first.
  Result<std::vector<Delivery>> DueDeliveries(int64_t now, int64_t limit);
  // The earliest next_attempt_at among them, due or not; nullopt when nothing is pending.
  Result<std::optional<int64_t>> NextDeliveryAt();
  // Counts one attempt. kRetry and kFailed change only a row that is still pending.
  Status RecordDeliveryAttempt(const DeliveryAttempt& attempt);
  // Pending rows of subscriptions that no longer exist or are disabled (rows a poll queued
  // while the subscription went away) become failed; returns how many.
  Result<int64_t> FailOrphanDeliveries(int64_t now);
  // The outbox rows of subscription `id`, oldest first.
  Result<std::vector<OutboxRow>> ListDeliveries(int64_t subscription_id);
  // Pending rows of enabled subscriptions (the delivery queue depth).
  Result<int64_t> CountPendingDeliveries();
  // Outbox rows per subscription id and state (subscriptions without rows are absent).
  Result<std::map<int64_t, DeliveryTally>> TallyDeliveries();
  // Holds the pending rows of `advisory_id` until `until` at the earliest (a settling burst).
  Status DeferDeliveries(const std::string& advisory_id, int64_t until);

 private:
  // Both REQUIRE: inside a transaction.
  Status FailPendingOf(int64_t id, const std::string& reason, int64_t now);
  Result<bool> DeleteSubscription(int64_t id, int64_t now);

  Database& db_;
};

}  // namespace hubwatch::store
