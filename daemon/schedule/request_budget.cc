#include "daemon/schedule/request_budget.h"

#include <algorithm>

namespace hubwatch::schedule {

void RequestBudget::Roll(int64_t now) const {
  const int64_t start = now - now % std::max<int64_t>(1, options_.window_s);
  if (start != window_start_) {
    window_start_ = start;
    used_ = 0;
    webhook_used_ = 0;
  }
}

void RequestBudget::ObserveHub(std::optional<int64_t> paused_until, std::optional<int64_t> quota,
                               std::optional<int64_t> window_s) {
  hub_paused_until_ = paused_until;
  if (quota && window_s && *window_s > 0) {
    hub_budget_ = std::max<int64_t>(1, *quota * 4 * options_.window_s / (5 * *window_s));
  }
}

std::optional<int64_t> RequestBudget::paused_until(int64_t now) const {
  if (hub_paused_until_ && now < *hub_paused_until_) return hub_paused_until_;
  return std::nullopt;
}

int64_t RequestBudget::budget() const {
  return hub_budget_ ? std::min(options_.quota, *hub_budget_) : options_.quota;
}

int64_t RequestBudget::used(int64_t now) const {
  Roll(now);
  return used_;
}

int64_t RequestBudget::window_end(int64_t now) const {
  Roll(now);
  return window_start_ + options_.window_s;
}

void RequestBudget::Spend(int64_t requests, int64_t now) {
  Roll(now);
  used_ += requests;
}

int64_t RequestBudget::webhook_budget() const {
  return budget() * std::clamp<int64_t>(options_.webhook_percent, 0, 100) / 100;
}

int64_t RequestBudget::webhook_used(int64_t now) const {
  Roll(now);
  return webhook_used_;
}

bool RequestBudget::ReserveWebhook(int64_t now) {
  Roll(now);
  if (webhook_used_ >= webhook_budget()) return false;
  ++webhook_used_;  // an unchanged poll's one refs request; the rest is counted when it ends
  return true;
}

void RequestBudget::SpendWebhook(int64_t requests, int64_t now) {
  Roll(now);
  webhook_used_ += std::max<int64_t>(0, requests - 1);
}

}  // namespace hubwatch::schedule
