#include "daemon/schedule/poll_queue.h"

#include <algorithm>

namespace hubwatch::schedule {

PollQueue::Index PollQueue::Set(std::string_view repo, int64_t at) {
  const std::optional<Index> known = ids_.Find(repo);
  const Index i = known ? *known : ids_.Intern(repo);
  if (!known) {
    if (i >= entries_.size()) entries_.resize(i + 1);
    entries_[i] = Entry{};
  }
  Move(i, at);
  return i;
}

void PollQueue::Move(Index i, int64_t at) {
  entries_[i].at = at;
  if (!entries_[i].in_flight) Push(i, at);
}

void PollQueue::Remove(Index i) {
  if (entries_[i].in_flight) --in_flight_;
  entries_[i] = Entry{};
  ids_.Release(i);
  rebuild_ = true;  // its slots in the heap must go before the heap compares again
}

void PollQueue::Rebuild(std::optional<Index> except) const {
  waiting_.clear();
  for (Index i = 0; i < ids_.end(); ++i) {
    if (ids_.live(i) && !entries_[i].in_flight && i != except) {
      waiting_.push_back({entries_[i].at, i});
    }
  }
  std::make_heap(waiting_.begin(), waiting_.end(),
                 [this](const Slot& a, const Slot& b) { return Later(a, b); });
  rebuild_ = false;
}

void PollQueue::Push(Index repo, int64_t at) {
  // After a removal, or when mostly stale: anew, without `repo` (pushed below).
  if (rebuild_ || waiting_.size() >= 2 * (ids_.size() - in_flight_) + 64) Rebuild(repo);
  waiting_.push_back({at, repo});
  std::push_heap(waiting_.begin(), waiting_.end(),
                 [this](const Slot& a, const Slot& b) { return Later(a, b); });
}

void PollQueue::PopFront() const {
  std::pop_heap(waiting_.begin(), waiting_.end(),
                [this](const Slot& a, const Slot& b) { return Later(a, b); });
  waiting_.pop_back();
}

std::optional<PollQueue::Index> PollQueue::Front() const {
  if (rebuild_) Rebuild();
  while (!waiting_.empty() && !Valid(waiting_.front())) PopFront();
  if (waiting_.empty()) return std::nullopt;
  return waiting_.front().repo;
}

void PollQueue::Start(Index front) {
  PopFront();
  entries_[front].in_flight = true;
  ++in_flight_;
}

void PollQueue::Finish(Index i, int64_t at) {
  if (entries_[i].in_flight) {
    entries_[i].in_flight = false;
    --in_flight_;
  }
  Move(i, at);
}

}  // namespace hubwatch::schedule
