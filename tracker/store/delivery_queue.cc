// DeliveryQueue: the outbox's pending rows as the deliverer's work queue.

#include "tracker/store/delivery_queue.h"

#include "tracker/store/connection.h"
#include "tracker/store/records.h"

namespace hubwatch::store {

Result<std::vector<Delivery>> DeliveryQueue::Due(int64_t now, int64_t limit) {
  // Follow events' rows (follow_outbox) come with their ids negated, "follow-SEQ" for an
  // advisory id (the webhook id is made of it) and the event as the body.
  HW_PREPARE(q,
             "SELECT o.id, o.advisory_id, o.target, s.id, s.url, s.secret, a.osv, o.attempts, "
             "o.created_at, o.next_attempt_at FROM outbox o "
             "JOIN subscriptions s ON s.id = o.subscription_id AND s.disabled_at IS NULL "
             "JOIN advisories a ON a.id = o.advisory_id "
             "WHERE o.state = 'pending' AND o.next_attempt_at <= ?1 "
             "UNION ALL "
             "SELECT -f.id, 'follow-' || f.event_seq, 'subscription:' || s.id, s.id, s.url, "
             "s.secret, json_object('type', 'hubwatch.follow.' || e.kind, 'seq', e.seq, "
             "'kind', e.kind, 'repo', e.repo, 'rule', e.rule, 'sha', e.sha, 'reason', e.reason, "
             "'at', strftime('%Y-%m-%dT%H:%M:%SZ', e.at, 'unixepoch')), f.attempts, "
             "f.created_at, f.next_attempt_at FROM follow_outbox f "
             "JOIN subscriptions s ON s.id = f.subscription_id AND s.disabled_at IS NULL "
             "JOIN follow_events e ON e.seq = f.event_seq "
             "WHERE f.state = 'pending' AND f.next_attempt_at <= ?1 "
             "ORDER BY 10, 1 LIMIT ?2");
  q.Bind(1, now).Bind(2, limit);
  std::vector<Delivery> out;
  for (;;) {
    Result<bool> row = q.Step("listing due deliveries");
    if (!row.ok()) return row.error();
    if (!*row) break;
    Delivery d;
    d.outbox_id = q.Int(0);
    d.advisory_id = q.Text(1);
    d.target = q.Text(2);
    d.subscription_id = q.Int(3);
    d.url = q.Text(4);
    d.secret = q.Text(5);
    d.body = q.Text(6);
    d.attempts = q.Int(7);
    d.created_at = q.Int(8);
    d.next_attempt_at = q.Int(9);
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::optional<int64_t>> DeliveryQueue::NextAttemptAt() {
  HW_PREPARE(q,
             "SELECT MIN(at) FROM (SELECT MIN(o.next_attempt_at) AS at FROM outbox o "
             "JOIN subscriptions s ON s.id = o.subscription_id AND s.disabled_at IS NULL "
             "WHERE o.state = 'pending' UNION ALL SELECT MIN(f.next_attempt_at) FROM "
             "follow_outbox f JOIN subscriptions s ON s.id = f.subscription_id AND "
             "s.disabled_at IS NULL WHERE f.state = 'pending')");
  Result<bool> row = q.Step("finding the next delivery");
  if (!row.ok()) return row.error();
  if (!*row || q.IsNull(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(q.Int(0));
}

Status DeliveryQueue::RecordAttempt(const DeliveryAttempt& a) {
  // A follow event's row (a negative id) is follow_outbox's; the statements are the same.
  const bool follow = a.outbox_id < 0;
  const std::optional<int>& status = a.status;
  if (a.outcome == DeliveryOutcome::kDelivered) {
    static const std::string sql[2] = {
        "UPDATE outbox SET state = 'delivered', attempts = attempts + 1, last_error = '', "
        "last_status = ?2, last_attempt_at = ?3, delivered_at = ?3 WHERE id = ?1",
        "UPDATE follow_outbox SET state = 'delivered', attempts = attempts + 1, last_error = '', "
        "last_status = ?2, last_attempt_at = ?3, delivered_at = ?3 WHERE id = -?1"};
    HW_PREPARE(q, sql[follow]);
    return q.Bind(1, a.outbox_id).BindOptional(2, status).Bind(3, a.at).Run("recording a delivery");
  }
  static const std::string sql[2] = {
      "UPDATE outbox SET state = ?2, attempts = attempts + 1, last_error = ?3, "
      "last_status = ?4, last_attempt_at = ?5, next_attempt_at = ?6 "
      "WHERE id = ?1 AND state = 'pending'",
      "UPDATE follow_outbox SET state = ?2, attempts = attempts + 1, last_error = ?3, "
      "last_status = ?4, last_attempt_at = ?5, next_attempt_at = ?6 "
      "WHERE id = -?1 AND state = 'pending'"};
  HW_PREPARE(q, sql[follow]);
  const bool retry = a.outcome == DeliveryOutcome::kRetry;
  return q.Bind(1, a.outbox_id)
      .Bind(2, DeliveryStateName(retry ? DeliveryState::kPending : DeliveryState::kFailed))
      .Bind(3, a.error)
      .BindOptional(4, status)
      .Bind(5, a.at)
      .Bind(6, retry ? a.next_attempt_at : a.at)
      .Run("recording a failed delivery");
}

Result<int64_t> DeliveryQueue::FailOrphans(int64_t now) {
  int64_t failed = 0;
  HW_TRY(db_.Atomically([&]() -> Status {
    HW_PREPARE(removed,
               "UPDATE outbox SET state = 'failed', last_error = 'subscription removed', "
               "last_attempt_at = COALESCE(last_attempt_at, ?1) "
               "WHERE state = 'pending' AND subscription_id IS NOT NULL "
               "AND subscription_id NOT IN (SELECT id FROM subscriptions)");
    HW_TRY(removed.Bind(1, now).Run("failing deliveries of removed subscriptions"));
    failed += sqlite3_changes(db_.handle());
    HW_PREPARE(disabled,
               "UPDATE outbox SET state = 'failed', last_error = 'subscription disabled', "
               "last_attempt_at = COALESCE(last_attempt_at, ?1) "
               "WHERE state = 'pending' AND subscription_id IN "
               "(SELECT id FROM subscriptions WHERE disabled_at IS NOT NULL)");
    HW_TRY(disabled.Bind(1, now).Run("failing deliveries of disabled subscriptions"));
    failed += sqlite3_changes(db_.handle());
    HW_PREPARE(follows,
               "UPDATE follow_outbox SET state = 'failed', last_error = 'subscription removed "
               "or disabled', last_attempt_at = COALESCE(last_attempt_at, ?1) "
               "WHERE state = 'pending' AND subscription_id NOT IN "
               "(SELECT id FROM subscriptions WHERE disabled_at IS NULL)");
    HW_TRY(follows.Bind(1, now).Run("failing follow deliveries of removed subscriptions"));
    failed += sqlite3_changes(db_.handle());
    return Status::Ok();
  }));
  return failed;
}

Status DeliveryQueue::Defer(const std::string& advisory_id, int64_t until) {
  HW_PREPARE(q,
             "UPDATE outbox SET next_attempt_at = MAX(next_attempt_at, ?2) "
             "WHERE advisory_id = ?1 AND state = 'pending'");
  return q.Bind(1, advisory_id).Bind(2, until).Run("deferring deliveries");
}

}  // namespace hubwatch::store
