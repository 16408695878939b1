#pragma once

// The time seam: monotonic time for waits, wall time for HTTP dates and rate-limit resets, and
// timers. Production uses MakeAsioClock; tests use a fake that advances without sleeping.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace hubwatch::hub {

using SteadyTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;
using TimerId = uint64_t;

// Thread safety: used from one event-loop thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime Now() const = 0;
  virtual WallTime WallNow() const = 0;
  // Calls `fn` on the loop thread once Now() >= deadline; never inside RunAt.
  virtual TimerId RunAt(SteadyTime deadline, std::function<void()> fn) = 0;
  // Drops a timer that has not fired yet; a no-op for one that has.
  virtual void Cancel(TimerId id) = 0;
};

// Real time, timers on `io`. REQUIRES: io outlives the clock.
std::unique_ptr<Clock> MakeAsioClock(boost::asio::io_context& io);

}  // namespace hubwatch::hub
