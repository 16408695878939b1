#include "daemon/schedule/scheduler.h"

#include <algorithm>

namespace hubwatch::schedule {

void Scheduler::Track(const std::string& repo, int64_t next_poll_at) {
  queue_.Set(repo, next_poll_at);
}

void Scheduler::Untrack(const std::string& repo) {
  hinted_.erase(repo);
  webhook_started_.erase(repo);
  webhook_in_flight_.erase(repo);
  if (const std::optional<PollQueue::Index> i = queue_.Find(repo)) queue_.Remove(*i);
}

bool Scheduler::polling(std::string_view repo) const {
  const std::optional<PollQueue::Index> i = queue_.Find(repo);
  return i && queue_.in_flight(*i);
}

std::vector<std::string> Scheduler::TakeDue(int64_t now) {
  if (budget_.paused_until(now)) return {};
  const size_t cap = static_cast<size_t>(std::max(0, options_.max_concurrent));
  if (queue_.in_flight() >= cap || budget_.spent(now)) return {};
  // Longest-due first (ties by id), only as many as there are free slots.
  std::vector<std::string> out;
  const size_t take = cap - queue_.in_flight();
  for (auto i = queue_.Front(); i && queue_.at(*i) <= now && out.size() < take;
       i = queue_.Front()) {
    queue_.Start(*i);
    std::string repo(queue_.name(*i));
    if (auto h = hinted_.find(repo);
        h != hinted_.end() && h->second.trigger == store::PollTrigger::kWebhook) {
      webhook_started_[repo] = now;
      webhook_in_flight_.insert(repo);
    }
    out.push_back(std::move(repo));
  }
  std::erase_if(webhook_started_, [&](const auto& started) {
    return started.second + options_.webhook_gap_s <= now;
  });
  return out;
}

Scheduler::NextPoll Scheduler::Finished(const std::string& repo, const PollEnd& end,
                                        int64_t requests, int64_t now, Slots slots) {
  budget_.Spend(requests, now);
  if (webhook_in_flight_.erase(repo)) budget_.SpendWebhook(requests, now);
  const std::optional<PollQueue::Index> i = queue_.Find(repo);
  if (!i) return {};
  NextPoll next;
  const auto hinted = hinted_.find(repo);
  if (hinted != hinted_.end()) {
    next.at = std::max(now, hinted->second.not_before);
  } else {
    next.at = Align(repo, std::max(now + WaitAfter(end, options_.interval_s), now + 1), slots);
  }
  // A burst publishes when it settles, not at the repo's next slot.
  if (end.settles_at && *end.settles_at < next.at) next = {*end.settles_at, true};
  queue_.Finish(*i, next.at);
  return next;
}

Scheduler::HintOutcome Scheduler::Hint(const std::string& repo, store::PollTrigger trigger,
                                       int64_t now) {
  const std::optional<PollQueue::Index> it = queue_.Find(repo);
  if (!it) return HintOutcome::kUntracked;
  const int64_t at = queue_.at(*it);
  const bool in_flight = queue_.in_flight(*it);
  const bool webhook = trigger == store::PollTrigger::kWebhook;
  if (auto pending = hinted_.find(repo); pending != hinted_.end()) {
    // One poll serves every hint; only the listing's is not held to a webhook's gap.
    if (webhook || pending->second.not_before <= now) return HintOutcome::kAlreadyQueued;
    pending->second = {trigger, now};
    if (!in_flight) queue_.Move(*it, now);
    return HintOutcome::kQueued;
  }
  if (!in_flight && at <= now) {  // due already: the hint changes nothing but its trigger
    hinted_.emplace(repo, PendingHint{trigger, now});
    return HintOutcome::kAlreadyQueued;
  }
  int64_t not_before = now;
  if (webhook) {
    if (auto started = webhook_started_.find(repo); started != webhook_started_.end()) {
      not_before = std::max(now, started->second + options_.webhook_gap_s);
    }
    if (!budget_.ReserveWebhook(now)) return HintOutcome::kDropped;
  }
  hinted_.emplace(repo, PendingHint{trigger, not_before});
  if (!in_flight && not_before < at) queue_.Move(*it, not_before);
  return not_before > now ? HintOutcome::kDeferred : HintOutcome::kQueued;
}

std::optional<store::PollTrigger> Scheduler::TakeTrigger(const std::string& repo) {
  auto it = hinted_.find(repo);
  if (it == hinted_.end()) return std::nullopt;
  const store::PollTrigger trigger = it->second.trigger;
  hinted_.erase(it);
  return trigger;
}

std::optional<int64_t> Scheduler::NextWake(int64_t now) const {
  const std::optional<PollQueue::Index> front = queue_.Front();
  if (!front) return std::nullopt;
  const int64_t wake = queue_.at(*front);
  if (wake <= now && budget_.spent(now)) return budget_.window_end(now);
  const std::optional<int64_t> paused = budget_.paused_until(now);
  if (paused && wake < *paused) return *paused;
  return wake;
}

std::optional<int64_t> Scheduler::next_poll_at(const std::string& repo) const {
  const std::optional<PollQueue::Index> i = queue_.Find(repo);
  if (!i) return std::nullopt;
  return queue_.at(*i);
}

int64_t Scheduler::Phase(const std::string& repo, int64_t interval_s) {
  // FNV-1a: stable across runs and builds, unlike std::hash.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : repo) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<int64_t>(h % static_cast<uint64_t>(std::max<int64_t>(1, interval_s)));
}

int64_t Scheduler::Align(const std::string& repo, int64_t t, Slots slots) const {
  const int64_t interval =
      std::max<int64_t>(1, slots == Slots::kReconcile && options_.reconcile_interval_s > 0
                               ? options_.reconcile_interval_s
                               : options_.interval_s);
  const int64_t phase = Phase(repo, interval);
  int64_t slot = t - ((t - phase) % interval + interval) % interval;
  if (slot < t) slot += interval;
  return slots == Slots::kReconcile ? Batched(slot) : slot;
}

int64_t Scheduler::Batched(int64_t t) const {
  constexpr int64_t kMaxBatchS = 60;
  if (options_.reconcile_interval_s <= 0 || t <= 0) return t;
  const int64_t quantum = std::clamp<int64_t>(options_.interval_s, 1, kMaxBatchS);
  return (t + quantum - 1) / quantum * quantum;
}

}  // namespace hubwatch::schedule
