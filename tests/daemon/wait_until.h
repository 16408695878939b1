#pragma once

// WaitUntil: waits for work another thread or process does (the service's store, fakehub's
// request log, a child's log file) by checking what it leaves, `done`, until that holds or
// `timeout` passes. The one place the daemon tests block on the wall clock, and only between
// checks: the time the daemon's own timers wait for is the test's ManualTimerClock
// (tests/hub/manual_timer_clock.h), moved, never slept through (tests/layers/check_sleeps.py).

#include <algorithm>
#include <chrono>
#include <thread>

namespace hubwatch::testing {

// Generous: the work is a few polls or writes, slow only under sanitizers and load.
inline constexpr std::chrono::milliseconds kWorkTimeout = std::chrono::seconds(60);

// Checks `done` until it returns true (then true) or `timeout` passes (then false).
template <class Done>
bool WaitUntil(Done done, std::chrono::milliseconds timeout = kWorkTimeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::chrono::milliseconds pause(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);  // sleep-ok: between checks of another thread's work
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
  return true;
}

// Like WaitUntil, with the value: calls `get` until `done(value)` holds or `timeout` passes, and
// returns the last value.
template <class Get, class Done>
auto WaitFor(Get get, Done done, std::chrono::milliseconds timeout = kWorkTimeout) {
  auto value = get();
  WaitUntil(
      [&] {
        if (done(value)) return true;
        value = get();
        return done(value);
      },
      timeout);
  return value;
}

}  // namespace hubwatch::testing
