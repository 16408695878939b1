#include "daemon/schedule/webhook_digest.h"

#include <fmt/format.h>

namespace hubwatch::schedule {
namespace {

// At most one line a minute about webhooks merged, deferred or dropped.
constexpr int64_t kIntervalS = 60;

}  // namespace

void WebhookDigest::Count(Scheduler::HintOutcome outcome) {
  using Outcome = Scheduler::HintOutcome;
  merged_ += outcome == Outcome::kAlreadyQueued;
  deferred_ += outcome == Outcome::kDeferred;
  dropped_ += outcome == Outcome::kDropped;
}

std::optional<WebhookDigest::Line> WebhookDigest::Take(int64_t now, const Scheduler& scheduler) {
  if (merged_ + deferred_ + dropped_ == 0) return std::nullopt;
  if (told_at_ && now < *told_at_ + kIntervalS) return std::nullopt;
  const SchedulerOptions& o = scheduler.options();
  const std::string dropped =
      dropped_ == 0 ? std::string()
                    : fmt::format(
                          " (the webhooks' share of the budget, {} of {} requests per {} s, was "
                          "spent; the listing and the reconcile still find what they announced)",
                          scheduler.requests().webhook_budget(), scheduler.requests().budget(),
                          o.window_s);
  Line line;
  line.warn = dropped_ > 0;
  line.text = fmt::format(
      "hub webhooks: {} merged into a poll already queued, {} deferred (a repo is polled for "
      "webhooks at most once per {} s), {} dropped{}{}",
      merged_, deferred_, o.webhook_gap_s, dropped_, dropped,
      told_at_ ? fmt::format(" in the last {} s", now - *told_at_) : "");
  merged_ = deferred_ = dropped_ = 0;
  told_at_ = now;
  return line;
}

}  // namespace hubwatch::schedule
