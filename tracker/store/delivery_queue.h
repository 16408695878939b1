#pragma once

// DeliveryQueue: the outbox as the webhook deliverer's work queue - the pending rows of enabled
// subscriptions (the advisories', and the follow events' of follow_outbox, whose outbox ids are
// negative and whose advisory ids are "follow-SEQ"), which of them are due, when the next one is, what each attempt came to, rows
// held back while an advisory's burst settles, and rows left pending by subscriptions that went
// away. Who subscribes, and what became of each row, is OutboxStore's. Times are Unix seconds.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database, which
// must outlive it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/database.h"

namespace hubwatch::store {

// A pending outbox row of an enabled subscription, with what delivering it needs.
struct Delivery {
  int64_t outbox_id = 0;
  std::string advisory_id{};
  std::string target{};
  int64_t subscription_id = 0;
  std::string url{};
  std::string secret{};
  std::string body{};  // the advisory's OSV JSON, as stored; or the follow event's JSON
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

class DeliveryQueue {
 public:
  explicit DeliveryQueue(Database& db) : db_(db) {}

  // Up to `limit` pending rows of enabled subscriptions with next_attempt_at <= now, earliest
  // due first.
  Result<std::vector<Delivery>> Due(int64_t now, int64_t limit);
  // The earliest next_attempt_at among them, due or not; nullopt when nothing is pending.
  Result<std::optional<int64_t>> NextAttemptAt();
  // Counts one attempt. kRetry and kFailed change only a row that is still pending.
  Status RecordAttempt(const DeliveryAttempt& attempt);
  // Pending rows of subscriptions that no longer exist or are disabled (rows a poll queued
  // while the subscription went away) become failed; returns how many.
  Result<int64_t> FailOrphans(int64_t now);
  // Holds the pending rows of `advisory_id` until `until` at the earliest (a settling burst).
  Status Defer(const std::string& advisory_id, int64_t until);

 private:
  Database& db_;
};

}  // namespace hubwatch::store
