#pragma once

// The time seam: the one way hubwatch reads time. Clock gives monotonic time (waits, durations,
// deadlines) and wall time (HTTP dates, rate-limit resets, the Unix seconds kept in the store);
// TimerClock adds timers on an event loop. Production uses SystemClock() and the Asio clock
// (tracker/hub/asio_clock.h); tests pass clocks that move only when told, so no test sleeps to
// let time pass.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

namespace hubwatch {

using SteadyTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;
using TimerId = uint64_t;

// Thread safety: SystemClock() and the Asio clock may be read from any thread; a test clock
// says what it allows.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime Now() const = 0;
  virtual WallTime WallNow() const = 0;
  // WallNow() in whole seconds since the Unix epoch, as the store and the API keep time.
  int64_t UnixSeconds() const;
};

// A Clock with timers. Thread safety: RunAt and Cancel on the event loop's thread only.
class TimerClock : public Clock {
 public:
  // Calls `fn` on the loop thread once Now() >= deadline; never inside RunAt.
  virtual TimerId RunAt(SteadyTime deadline, std::function<void()> fn) = 0;
  // Drops a timer that has not fired yet; a no-op for one that has.
  virtual void Cancel(TimerId id) = 0;
};

// The real clock, without timers; one for the process, alive until exit.
const Clock& SystemClock();

// A clock that moves only when its owner sets it: tests, and replays on their own time. Both
// times advance together. Thread safety: any thread.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t unix_seconds = 0) { SetUnixSeconds(unix_seconds); }
  SteadyTime Now() const override { return SteadyTime(ticks_.load()); }
  WallTime WallNow() const override {
    return WallTime(std::chrono::duration_cast<WallTime::duration>(ticks_.load()));
  }
  void SetUnixSeconds(int64_t unix_seconds) { ticks_ = std::chrono::seconds(unix_seconds); }
  void Advance(std::chrono::nanoseconds by) { ticks_ = ticks_.load() + by; }

 private:
  std::atomic<std::chrono::nanoseconds> ticks_{};  // since the Unix epoch
};

}  // namespace hubwatch
