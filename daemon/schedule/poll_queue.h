#pragma once

// PollQueue: the scheduler's table of tracked repos: each one's next poll time, whether a poll
// of it runs, and the waiting ones in order of that time (ties by id). Compact for 100,000
// repos: ids interned once (RepoIds), times in a vector by index, the waiting ones in a binary
// heap whose stale slots (a repo moved or started since) are dropped when they surface; about
// 80 bytes a repo.
//
// The heap orders slots by their repo's name, so a slot must never outlive its repo's index: a
// released index has no name, and a reused one another name, either of which would break the
// heap's order (and a released one's text may be reclaimed). Remove therefore marks the heap
// for a rebuild from the live repos, done once before its next use: untracking thousands of
// repos at once costs one O(n) rebuild, not one per repo.
//
// Thread safety: none (the scheduler's, on the network thread).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "daemon/schedule/repo_ids.h"

namespace hubwatch::schedule {

class PollQueue {
 public:
  using Index = RepoIds::Index;

  std::optional<Index> Find(std::string_view repo) const { return ids_.Find(repo); }
  // Tracks `repo` (or moves it) with its next poll at `at`; one in flight waits from Finish.
  Index Set(std::string_view repo, int64_t at);
  // Moves a tracked repo's next poll time (it waits there unless in flight).
  void Move(Index i, int64_t at);
  void Remove(Index i);  // untracked, in flight or not
  // The earliest waiting repo; nullopt when none waits.
  std::optional<Index> Front() const;
  void Start(Index front);  // REQUIRES: Front() returned it. Now in flight.
  // A poll of `i` ended: it waits for its next poll at `at`.
  void Finish(Index i, int64_t at);

  int64_t at(Index i) const { return entries_[i].at; }
  bool in_flight(Index i) const { return entries_[i].in_flight; }
  std::string_view name(Index i) const { return ids_.Name(i); }
  size_t size() const { return ids_.size(); }
  size_t in_flight() const { return in_flight_; }
  // Calls f(id, next poll time) for every tracked repo; f must not change the queue.
  template <class F>
  void ForEach(F&& f) const {
    for (Index i = 0; i < ids_.end(); ++i) {
      if (ids_.live(i)) f(ids_.Name(i), entries_[i].at);
    }
  }

 private:
  struct Entry {
    int64_t at = 0;
    bool in_flight = false;
  };
  struct Slot {
    int64_t at;
    Index repo;
  };
  bool Later(const Slot& a, const Slot& b) const {
    return a.at != b.at ? a.at > b.at : ids_.Name(a.repo) > ids_.Name(b.repo);
  }
  bool Valid(const Slot& s) const {
    return ids_.live(s.repo) && !entries_[s.repo].in_flight && entries_[s.repo].at == s.at;
  }
  // Queues a waiting repo; rebuilds the heap when stale slots outnumber the live ones.
  void Push(Index repo, int64_t at);
  void PopFront() const;
  // The heap anew from the waiting live repos but `except`; clears rebuild_.
  void Rebuild(std::optional<Index> except = std::nullopt) const;

  RepoIds ids_;
  std::vector<Entry> entries_;  // by RepoIds index
  size_t in_flight_ = 0;
  mutable std::vector<Slot> waiting_;  // a heap, Later on top last; const reads drop stale tops
  mutable bool rebuild_ = false;       // a repo was removed: waiting_ may name released indexes
};

}  // namespace hubwatch::schedule
