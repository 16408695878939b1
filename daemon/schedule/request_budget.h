#pragma once

// RequestBudget: how many Hub requests may still be sent in the current window. A fixed window
// (window_s) holds `quota` requests, or 80% of what the Hub announced when that is less
// (ObserveHub, scaled to window_s; at least 1, so polling never stops for good); while the Hub
// has paused the bucket nothing may be spent. The polls webhooks start get a share of their own
// (webhook_percent of the budget): one request is reserved when such a poll is queued, the rest
// counted when it ends. Everything spent - polls, listing reads, derivative rounds - counts.
//
// Pure bookkeeping over injected time. Not thread-safe: the scheduler's thread.

#include <cstdint>
#include <optional>

namespace hubwatch::schedule {

class RequestBudget {
 public:
  struct Options {
    int64_t quota = 400;  // requests per window
    int64_t window_s = 300;
    int64_t webhook_percent = 25;  // of budget(), per window, for the polls webhooks start
  };
  explicit RequestBudget(Options options) : options_(options) {}
  void SetOptions(Options options) { options_ = options; }

  // The Hub's last word on the api bucket: `paused_until` (Unix seconds) while its quota is spent;
  // `quota` requests per `window_s` seconds when it announced a policy.
  void ObserveHub(std::optional<int64_t> paused_until, std::optional<int64_t> quota,
                  std::optional<int64_t> window_s);
  // The Hub's pause, while it lasts at `now`.
  std::optional<int64_t> paused_until(int64_t now) const;

  // The budget per window in force: the configured quota, or less after ObserveHub.
  int64_t budget() const;
  int64_t used(int64_t now) const;
  bool spent(int64_t now) const { return used(now) >= budget(); }
  // When the current window ends (and the budget is whole again).
  int64_t window_end(int64_t now) const;
  void Spend(int64_t requests, int64_t now);

  // What the polls webhooks start may spend per window, and have spent in this one.
  int64_t webhook_budget() const;
  int64_t webhook_used(int64_t now) const;
  // Reserves one request for a webhook's poll; false (nothing reserved) when the share is spent.
  bool ReserveWebhook(int64_t now);
  // A webhook's poll ended having sent `requests` (one of them reserved when it was queued).
  void SpendWebhook(int64_t requests, int64_t now);

 private:
  // Starts a new window when `now` is past the current one.
  void Roll(int64_t now) const;

  Options options_;
  mutable int64_t window_start_ = 0;
  mutable int64_t used_ = 0;
  mutable int64_t webhook_used_ = 0;
  std::optional<int64_t> hub_paused_until_;
  std::optional<int64_t> hub_budget_;  // 80% of the Hub's quota, per window_s
};

}  // namespace hubwatch::schedule
