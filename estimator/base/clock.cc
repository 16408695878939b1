#include "estimator/base/clock.h"

namespace hubwatch {
namespace {

class RealClock final : public Clock {
 public:
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
};

}  // namespace

int64_t Clock::UnixSeconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(WallNow().time_since_epoch()).count();
}

const Clock& SystemClock() {
  static const RealClock clock;
  return clock;
}

}  // namespace hubwatch
