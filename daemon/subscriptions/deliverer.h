#pragma once

// WebhookDeliverer: drains the outbox rows of subscription targets, at least once each.
//
// Every pending row that is due (next_attempt_at <= now) of an enabled subscription is POSTed
// as SignedRequest builds it (webhook_request.h), with webhook-id WebhookId(advisory, target):
// the same on every retry and after a restart. JudgeAttempt (attempt_verdict.h) says what each
// outcome comes to: delivered; retried after a full-jitter exponential delay (at least
// Retry-After on 429/503) until retry_for_s after the row was created, then failed; or, on 410
// Gone, the subscription disabled and its pending rows failed. A row whose secret is not valid
// or whose URL the target policy refuses is retried like a refused connection.
// All state is in the store (one Write per attempt), so a restart picks up where it stopped.
// A transfer cut short by Stop or a sender shutdown is not counted as an attempt.
//
// Thread safety: everything runs on the loop thread of `clock` and `sender` (the network
// thread); store writes go through StoreAccess::Write. REQUIRES: the collaborators outlive the
// deliverer.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "daemon/service/metrics.h"
#include "daemon/service/store_access.h"
#include "daemon/subscriptions/attempt_verdict.h"
#include "daemon/subscriptions/webhook_sender.h"
#include "estimator/base/clock.h"
#include "estimator/base/random.h"
#include "tracker/hub/backoff.h"

namespace hubwatch::subscriptions {

struct DelivererOptions {
  int64_t retry_for_s = 3 * 24 * 3600;  // WebhookConfig::retry_for_s
  std::chrono::milliseconds timeout{10'000};
  bool allow_private_targets = false;
  size_t max_in_flight = 8;
  // Delay before retry n (0-based): uniform in [0, min(cap, base * 2^n)], at least min_delay.
  // Retry-After is honoured up to max_server_wait.
  hub::RetryPolicy backoff{.max_retries = 0,
                           .base = std::chrono::seconds(5),
                           .cap = std::chrono::hours(6),
                           .max_server_wait = std::chrono::hours(24)};
  std::chrono::seconds min_delay{1};
  std::string user_agent;                     // "hubwatch/<version>"
  service::Metrics* metrics = nullptr;        // optional
  std::function<void(std::string_view)> log;  // one line per event; never secrets
  // After a 410 disabled subscription `id` (e.g. refresh the matcher).
  std::function<void(int64_t id)> on_disabled;
};

class WebhookDeliverer {
 public:
  WebhookDeliverer(service::StoreAccess& store, WebhookSender& sender, TimerClock& clock,
                   Random& random, DelivererOptions options);
  ~WebhookDeliverer();
  WebhookDeliverer(const WebhookDeliverer&) = delete;
  WebhookDeliverer& operator=(const WebhookDeliverer&) = delete;

  // Fails the rows of removed subscriptions, then starts delivering what is due and keeps a
  // timer for the next due row.
  void Start();
  // New rows were committed (or subscriptions changed): look again soon.
  void Kick();
  // No new attempts; attempts in flight still record their outcome when they finish.
  void Stop();
  // Applies a reloaded webhooks config to later attempts.
  void SetPolicy(int64_t retry_for_s, std::chrono::milliseconds timeout, bool allow_private);

  size_t in_flight() const { return in_flight_.size(); }
  // Test hook: runs once an attempt's outcome is recorded in the store.
  std::function<void(const AttemptReport&)> on_attempt;

 private:
  void SchedulePump();
  void Pump();
  void ArmTimer();
  void StartAttempt(const store::Delivery& delivery);
  void Finish(const store::Delivery& delivery, const std::string& webhook_id,
              hub::TransportOutcome outcome);
  void Record(AttemptReport report, const std::string& url);
  int64_t WallSeconds() const;
  void Log(const std::string& line) const;
  void Count(std::string_view result) const;

  service::StoreAccess& store_;
  WebhookSender& sender_;
  TimerClock& clock_;
  Random& random_;
  DelivererOptions options_;
  bool running_ = false;
  bool pump_scheduled_ = false;
  std::optional<TimerId> timer_;
  std::optional<int64_t> timer_at_;
  std::set<int64_t> in_flight_;  // outbox ids
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hubwatch::subscriptions
