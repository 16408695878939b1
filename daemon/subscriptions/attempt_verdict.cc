#include "daemon/subscriptions/attempt_verdict.h"

#include <algorithm>
#include <string_view>

#include "tracker/hub/rate_limit.h"

namespace hubwatch::subscriptions {

AttemptReport JudgeAttempt(const store::Delivery& d, const std::string& webhook_id,
                           const hub::TransportOutcome& outcome, const RetryRules& rules,
                           const Clock& clock, Random& random) {
  const int64_t now = clock.UnixSeconds();
  AttemptReport report;
  report.outbox_id = d.outbox_id;
  report.subscription_id = d.subscription_id;
  report.webhook_id = webhook_id;
  report.attempt = d.attempts + 1;
  const int status = outcome.ok() ? outcome.response.status : 0;
  if (outcome.ok()) report.status = status;
  if (outcome.ok() && status / 100 == 2) {
    report.result = AttemptReport::Result::kDelivered;
    return report;
  }
  if (outcome.ok() && status == 410) {
    report.result = AttemptReport::Result::kDisabled;
    report.error = "the receiver answered 410 Gone";
    return report;
  }
  report.error = outcome.ok() ? "HTTP " + std::to_string(status) : outcome.error->message;
  std::chrono::milliseconds delay = std::max<std::chrono::milliseconds>(
      rules.min_delay, hub::FullJitterDelay(rules.backoff, static_cast<int>(d.attempts), random));
  if (outcome.ok() && (status == 429 || status == 503)) {
    if (std::optional<std::string_view> h = outcome.response.headers.Get("Retry-After")) {
      if (std::optional<std::chrono::seconds> wait = hub::ParseRetryAfter(*h, clock.WallNow())) {
        delay = std::max<std::chrono::milliseconds>(
            delay, std::min<std::chrono::milliseconds>(*wait, rules.backoff.max_server_wait));
      }
    }
  }
  const int64_t next = now + (delay.count() + 999) / 1000;
  if (next > d.created_at + rules.retry_for_s) {
    report.result = AttemptReport::Result::kFailed;
    report.error += " (gave up after " + std::to_string(report.attempt) + " attempts)";
  } else {
    report.result = AttemptReport::Result::kRetry;
    report.next_attempt_at = next;
  }
  return report;
}

}  // namespace hubwatch::subscriptions
