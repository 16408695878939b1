#pragma once

// ManualTimerClock: a TimerClock for tests whose event loop runs on a thread of its own (a
// Service under test). Time is a ManualClock's and moves only when the test calls Advance, which
// fires every timer due on the way in deadline order, each on the loop thread, and waits for each
// to have run before looking for the next: a timer that a callback sets within the step fires in
// the same Advance, as it would have in real time. A timer set at or before Now() is posted to
// the loop at once. Nothing here sleeps.
//
// (FakeClock, beside it, is the other test clock: it jumps to each deadline as soon as the timer
// is set, for code whose waits the test only records.)
//
// Thread safety: Now(), WallNow(), RunAt(), Cancel(), pending() from any thread; Advance() from
// any thread but the loop's (it waits for the loop). A cancelled timer never runs, even when its
// callback was already posted. REQUIRES: `loop` and `time` outlive the clock.

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "estimator/base/clock.h"

namespace hubwatch::testing {

class ManualTimerClock final : public TimerClock {
 public:
  ManualTimerClock(boost::asio::io_context& loop, ManualClock& time) : loop_(loop), time_(time) {}

  SteadyTime Now() const override { return time_.Now(); }
  WallTime WallNow() const override { return time_.WallNow(); }

  TimerId RunAt(SteadyTime deadline, std::function<void()> fn) override {
    std::lock_guard lock(mutex_);
    const TimerId id = ++last_id_;
    const bool due = deadline <= time_.Now();
    timers_[id] = {deadline, std::move(fn), due};
    if (due) boost::asio::post(loop_, [this, id] { Fire(id); });
    return id;
  }

  void Cancel(TimerId id) override {
    std::lock_guard lock(mutex_);
    timers_.erase(id);
  }

  // Moves time forward by `by`, firing the timers due on the way (see above). Returns false when
  // a callback did not run within `patience` of real time (the loop is stopped or wedged): time
  // then stays at that timer's deadline.
  bool Advance(std::chrono::nanoseconds by,
               std::chrono::seconds patience = std::chrono::seconds(30)) {
    const SteadyTime target = time_.Now() + by;
    for (;;) {
      std::unique_lock lock(mutex_);
      auto next = timers_.end();
      for (auto it = timers_.begin(); it != timers_.end(); ++it) {
        if (it->second.posted || it->second.deadline > target) continue;
        if (next == timers_.end() || it->second.deadline < next->second.deadline) next = it;
      }
      if (next == timers_.end()) {
        MoveTo(target);
        return true;
      }
      MoveTo(next->second.deadline);
      next->second.posted = true;
      auto ran = std::make_shared<Done>();
      boost::asio::post(loop_, [this, id = next->first, ran] {
        Fire(id);
        std::lock_guard done_lock(ran->mutex);
        ran->done = true;
        ran->cv.notify_all();
      });
      lock.unlock();
      std::unique_lock done_lock(ran->mutex);
      if (!ran->cv.wait_for(done_lock, patience, [&] { return ran->done; })) return false;
    }
  }

  // Timers set and neither fired nor cancelled.
  size_t pending() const {
    std::lock_guard lock(mutex_);
    return timers_.size();
  }

 private:
  struct Timer {
    SteadyTime deadline;
    std::function<void()> fn;
    bool posted = false;  // its Fire is queued on the loop
  };
  struct Done {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
  };

  // On the loop thread: runs timer `id` unless it was cancelled meanwhile.
  void Fire(TimerId id) {
    std::function<void()> fn;
    {
      std::lock_guard lock(mutex_);
      auto it = timers_.find(id);
      if (it == timers_.end()) return;
      fn = std::move(it->second.fn);
      timers_.erase(it);
    }
    fn();
  }

  // REQUIRES: mutex_ held.
  void MoveTo(SteadyTime t) {
    if (t > time_.Now()) time_.Advance(t - time_.Now());
  }

  boost::asio::io_context& loop_;
  ManualClock& time_;
  mutable std::mutex mutex_;
  TimerId last_id_ = 0;
  std::map<TimerId, Timer> timers_;
};

}  // namespace hubwatch::testing
