#include "daemon/subscriptions/deliverer.h"

#include "daemon/subscriptions/signature.h"
#include "daemon/subscriptions/target_policy.h"
#include "daemon/subscriptions/webhook_request.h"

namespace hubwatch::subscriptions {
namespace {

constexpr std::chrono::seconds kStoreErrorRetry{30};

std::string_view ResultName(AttemptReport::Result r) {
  switch (r) {
    case AttemptReport::Result::kDelivered:
      return "delivered";
    case AttemptReport::Result::kRetry:
      return "retry";
    case AttemptReport::Result::kFailed:
      return "failed";
    case AttemptReport::Result::kDisabled:
      return "disabled";
  }
  return "retry";
}

// How an attempt's result is kept in the outbox: a 410 fails the row (and disables its
// subscription).
store::DeliveryOutcome StoredOutcome(AttemptReport::Result result) {
  switch (result) {
    case AttemptReport::Result::kDelivered:
      return store::DeliveryOutcome::kDelivered;
    case AttemptReport::Result::kRetry:
      return store::DeliveryOutcome::kRetry;
    case AttemptReport::Result::kFailed:
    case AttemptReport::Result::kDisabled:
      break;
  }
  return store::DeliveryOutcome::kFailed;
}

}  // namespace

WebhookDeliverer::WebhookDeliverer(service::StoreAccess& store, WebhookSender& sender,
                                   TimerClock& clock, Random& random, DelivererOptions options)
    : store_(store),
      sender_(sender),
      clock_(clock),
      random_(random),
      options_(std::move(options)) {}

WebhookDeliverer::~WebhookDeliverer() { Stop(); }

void WebhookDeliverer::Start() {
  if (running_) return;
  running_ = true;
  std::weak_ptr<bool> alive = alive_;
  const int64_t now = WallSeconds();
  store_.Write(
      [now](store::Store& w) -> Status {
        Result<int64_t> failed = w.deliveries().FailOrphans(now);
        return failed.ok() ? Status::Ok() : Status(failed.error());
      },
      [this, alive](Status s) {
        if (alive.expired()) return;
        if (!s.ok()) Log("webhook: failing orphaned deliveries: " + s.error().message);
        SchedulePump();
      });
}

void WebhookDeliverer::Kick() { SchedulePump(); }

void WebhookDeliverer::Stop() {
  running_ = false;
  if (timer_) clock_.Cancel(*timer_);
  timer_.reset();
  timer_at_.reset();
}

void WebhookDeliverer::SetPolicy(int64_t retry_for_s, std::chrono::milliseconds timeout,
                                 bool allow_private) {
  options_.retry_for_s = retry_for_s;
  options_.timeout = timeout;
  options_.allow_private_targets = allow_private;
}

void WebhookDeliverer::SchedulePump() {
  if (!running_ || pump_scheduled_) return;
  pump_scheduled_ = true;
  std::weak_ptr<bool> alive = alive_;
  clock_.RunAt(clock_.Now(), [this, alive] {
    if (alive.expired()) return;
    pump_scheduled_ = false;
    Pump();
  });
}

void WebhookDeliverer::Pump() {
  if (!running_) return;
  const int64_t now = WallSeconds();
  const size_t room =
      options_.max_in_flight > in_flight_.size() ? options_.max_in_flight - in_flight_.size() : 0;
  if (room > 0) {
    Result<std::vector<store::Delivery>> due =
        store_.reads().deliveries().Due(now, static_cast<int64_t>(room + in_flight_.size()));
    if (!due.ok()) {
      Log("webhook: reading the outbox failed: " + due.error().message);
      timer_at_.reset();
      if (timer_) clock_.Cancel(*timer_);
      std::weak_ptr<bool> alive = alive_;
      timer_ = clock_.RunAt(clock_.Now() + kStoreErrorRetry, [this, alive] {
        if (alive.expired()) return;
        timer_.reset();
        Pump();
      });
      return;
    }
    size_t started = 0;
    for (const store::Delivery& d : *due) {
      if (started == room) break;
      if (in_flight_.count(d.outbox_id)) continue;
      StartAttempt(d);
      ++started;
    }
  }
  if (options_.metrics) {
    Result<int64_t> depth = store_.reads().outbox().CountPendingDeliveries();
    if (depth.ok()) {
      options_.metrics
          ->gauge("hubwatch_webhook_queue_depth", "Webhook deliveries pending in the outbox")
          .Set(static_cast<double>(*depth));
    }
    options_.metrics->gauge("hubwatch_webhook_in_flight", "Webhook deliveries being sent")
        .Set(static_cast<double>(in_flight_.size()));
  }
  ArmTimer();
}

// Wakes at the next row due. A row due already is either in flight or waiting for room, and
// a finishing attempt pumps again, so no timer is needed for it.
void WebhookDeliverer::ArmTimer() {
  Result<std::optional<int64_t>> next = store_.reads().deliveries().NextAttemptAt();
  const int64_t now = WallSeconds();
  std::optional<int64_t> at;
  if (next.ok() && next->has_value()) at = **next;
  if (at && *at <= now) at = in_flight_.empty() ? std::optional<int64_t>(now + 1) : std::nullopt;
  if (at == timer_at_ && timer_) return;
  if (timer_) clock_.Cancel(*timer_);
  timer_.reset();
  timer_at_ = at;
  if (!at) return;
  std::weak_ptr<bool> alive = alive_;
  timer_ = clock_.RunAt(clock_.Now() + std::chrono::seconds(*at - now), [this, alive] {
    if (alive.expired()) return;
    timer_.reset();
    timer_at_.reset();
    Pump();
  });
}

void WebhookDeliverer::StartAttempt(const store::Delivery& d) {
  in_flight_.insert(d.outbox_id);
  const std::string webhook_id = WebhookId(d.advisory_id, d.target);
  std::weak_ptr<bool> alive = alive_;
  auto finish = [this, alive, d, webhook_id](hub::TransportOutcome outcome) {
    if (alive.expired()) return;
    Finish(d, webhook_id, std::move(outcome));
  };
  Result<WebhookRequest> request =
      SignedRequest(d, webhook_id, WallSeconds(),
                    {options_.timeout, options_.allow_private_targets, options_.user_agent});
  if (!request.ok()) {
    hub::TransportOutcome refused;
    refused.error =
        hub::TransportError{hub::TransportErrorKind::kConnect, 0, request.error().message};
    clock_.RunAt(clock_.Now(), [finish, refused] { finish(refused); });
    return;
  }
  sender_.Post(std::move(request).value(), std::move(finish));
}

void WebhookDeliverer::Finish(const store::Delivery& d, const std::string& webhook_id,
                              hub::TransportOutcome outcome) {
  if (outcome.error && outcome.error->kind == hub::TransportErrorKind::kShutdown) {
    in_flight_.erase(d.outbox_id);
    SchedulePump();  // not the receiver's doing: the row stays as it was
    return;
  }
  Record(
      JudgeAttempt(d, webhook_id, outcome,
                   {options_.retry_for_s, options_.backoff, options_.min_delay}, clock_, random_),
      d.url);
}

void WebhookDeliverer::Record(AttemptReport report, const std::string& url) {
  const int64_t now = WallSeconds();
  store::DeliveryAttempt attempt;
  attempt.outbox_id = report.outbox_id;
  attempt.at = now;
  attempt.status = report.status;
  attempt.error = report.error;
  attempt.next_attempt_at = report.next_attempt_at;
  attempt.outcome = StoredOutcome(report.result);
  const bool disable = report.result == AttemptReport::Result::kDisabled;
  const int64_t subscription = report.subscription_id;
  std::weak_ptr<bool> alive = alive_;
  store_.Write(
      [attempt, disable, subscription, now](store::Store& w) -> Status {
        if (Status s = w.deliveries().RecordAttempt(attempt); !s.ok()) return s;
        if (!disable) return Status::Ok();
        Result<bool> r =
            w.outbox().DisableSubscription(subscription, "the receiver answered 410 Gone", now);
        return r.ok() ? Status::Ok() : Status(r.error());
      },
      [this, alive, report = std::move(report), url](Status s) {
        if (alive.expired()) return;
        // Only now: until the outcome is committed the row still looks due.
        in_flight_.erase(report.outbox_id);
        const std::string where =
            RedactUrl(url) + " (subscription " + std::to_string(report.subscription_id) + ", " +
            report.webhook_id + ", attempt " + std::to_string(report.attempt) + ")";
        if (!s.ok()) {
          Log("webhook: recording an attempt to " + where + " failed: " + s.error().message);
        } else if (report.result == AttemptReport::Result::kDelivered) {
          Log("webhook: delivered to " + where + ": HTTP " + std::to_string(*report.status));
        } else if (report.result == AttemptReport::Result::kDisabled) {
          Log("webhook: " + where + " answered 410 Gone; subscription disabled");
        } else if (report.result == AttemptReport::Result::kFailed) {
          Log("webhook: giving up on " + where + ": " + report.error);
        } else {
          Log("webhook: " + where + " failed: " + report.error + "; next attempt in " +
              std::to_string(report.next_attempt_at - WallSeconds()) + " s");
        }
        Count(ResultName(report.result));
        if (s.ok() && report.result == AttemptReport::Result::kDisabled && options_.on_disabled) {
          options_.on_disabled(report.subscription_id);
        }
        if (on_attempt) on_attempt(report);
        SchedulePump();
      });
}

int64_t WebhookDeliverer::WallSeconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
      .count();
}

void WebhookDeliverer::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

void WebhookDeliverer::Count(std::string_view result) const {
  if (!options_.metrics) return;
  options_.metrics
      ->counter("hubwatch_webhook_attempts_total", "Webhook delivery attempts by result",
                {{"result", std::string(result)}})
      .Add();
}

}  // namespace hubwatch::subscriptions
