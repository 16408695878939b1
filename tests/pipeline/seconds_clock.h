#pragma once

// A Clock that reads a test's own `int64_t` of Unix seconds, so that a test moves time by
// assigning to it. Both times are that many seconds after their epochs. Single-threaded tests
// only (the variable is read without synchronisation).

#include <cstdint>

#include "estimator/base/clock.h"

namespace hubwatch {

class SecondsClock final : public Clock {
 public:
  // REQUIRES: `seconds` outlives the clock.
  explicit SecondsClock(const int64_t& seconds) : seconds_(seconds) {}
  SteadyTime Now() const override { return SteadyTime(std::chrono::seconds(seconds_)); }
  WallTime WallNow() const override { return WallTime(std::chrono::seconds(seconds_)); }

 private:
  const int64_t& seconds_;
};

}  // namespace hubwatch
