#pragma once

// The production TimerClock: real time, timers on an io_context. Asio stays in asio_clock.cc.

#include <memory>

#include "estimator/base/clock.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace hubwatch::hub {

// REQUIRES: io outlives the clock. Now() and WallNow() may be read from any thread.
std::unique_ptr<TimerClock> MakeAsioClock(boost::asio::io_context& io);

}  // namespace hubwatch::hub
