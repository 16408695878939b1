#include "tracker/hub/asio_clock.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <unordered_map>

namespace hubwatch::hub {
namespace {

class AsioClock final : public TimerClock {
 public:
  explicit AsioClock(boost::asio::io_context& io) : io_(io) {}
  ~AsioClock() override {
    for (auto& [id, timer] : timers_) timer->cancel();
  }

  SteadyTime Now() const override { return SystemClock().Now(); }
  WallTime WallNow() const override { return SystemClock().WallNow(); }

  TimerId RunAt(SteadyTime deadline, std::function<void()> fn) override {
    const TimerId id = ++last_id_;
    auto timer = std::make_shared<boost::asio::steady_timer>(io_, deadline);
    timers_[id] = timer;
    std::weak_ptr<bool> alive = alive_;
    timer->async_wait([this, id, alive, timer, fn = std::move(fn)](boost::system::error_code ec) {
      if (ec || alive.expired()) return;
      // Cancelled after it expired, its completion already queued: cancel() cannot abort it.
      if (timers_.erase(id) == 0) return;
      fn();
    });
    return id;
  }

  void Cancel(TimerId id) override {
    auto it = timers_.find(id);
    if (it == timers_.end()) return;
    it->second->cancel();
    timers_.erase(it);
  }

 private:
  boost::asio::io_context& io_;
  TimerId last_id_ = 0;
  std::unordered_map<TimerId, std::shared_ptr<boost::asio::steady_timer>> timers_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace

std::unique_ptr<TimerClock> MakeAsioClock(boost::asio::io_context& io) {
  return std::make_unique<AsioClock>(io);
}

}  // namespace hubwatch::hub
