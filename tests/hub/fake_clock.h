#pragma once

// A TimerClock for tests: time moves only when a timer is set. RunAt jumps Now() to the deadline at
// once and posts the callback to the io_context, so a backoff of 30 s costs nothing, and every
// wait is recorded for the test to check. on_wait lets a test act "during" a wait (e.g. refill
// fakehub's rate-limit window).

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <map>
#include <vector>

#include "estimator/base/clock.h"

namespace hubwatch::hub {

class FakeClock final : public TimerClock {
 public:
  explicit FakeClock(boost::asio::io_context& io) : io_(io) {}

  SteadyTime Now() const override { return now_; }
  WallTime WallNow() const override { return wall_start_ + (now_ - SteadyTime{}); }

  TimerId RunAt(SteadyTime deadline, std::function<void()> fn) override {
    const TimerId id = ++last_id_;
    if (deadline > now_) {
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now_);
      waits_.push_back(wait);
      if (on_wait) on_wait(wait);
      now_ = deadline;
    }
    pending_[id] = std::move(fn);
    boost::asio::post(io_, [this, id] {
      auto it = pending_.find(id);
      if (it == pending_.end()) return;
      auto callback = std::move(it->second);
      pending_.erase(it);
      callback();
    });
    return id;
  }

  void Cancel(TimerId id) override { pending_.erase(id); }

  // Every positive wait asked for, in order.
  const std::vector<std::chrono::milliseconds>& waits() const { return waits_; }
  void SetWallTime(WallTime wall) { wall_start_ = wall - (now_ - SteadyTime{}); }

  std::function<void(std::chrono::milliseconds)> on_wait;

 private:
  boost::asio::io_context& io_;
  SteadyTime now_{};
  WallTime wall_start_ = std::chrono::system_clock::from_time_t(1'790'000'000);
  TimerId last_id_ = 0;
  std::map<TimerId, std::function<void()>> pending_;
  std::vector<std::chrono::milliseconds> waits_;
};

}  // namespace hubwatch::hub
