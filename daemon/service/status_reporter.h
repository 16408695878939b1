#pragma once

// StatusReporter: what systemd and /metrics see of a running service. WATCHDOG=1 at half of
// WATCHDOG_USEC, only while the poll loop is alive (a wedged loop stops the pings and systemd
// acts); every 10 s STATUS= with the loop's status line, the polls-in-flight gauge and the
// store-content gauges. Both are timed by `clock`; neither timer fires after Stop() or
// destruction.
//
// Thread safety: network thread only (where the clock's timers run); destroy it there or after
// the loop has stopped. REQUIRES: everything it borrows outlives it; `reads` is the network
// thread's store connection.

#include <optional>

#include "daemon/service/metrics.h"
#include "daemon/service/notify.h"
#include "daemon/service/loop_health.h"
#include "estimator/base/clock.h"
#include "tracker/store/store.h"

namespace hubwatch::service {

class StatusReporter {
 public:
  StatusReporter(TimerClock& clock, const Notifier& notify, Metrics& metrics,
                 const LoopHealth& loop, store::Store& reads);
  ~StatusReporter();
  StatusReporter(const StatusReporter&) = delete;
  StatusReporter& operator=(const StatusReporter&) = delete;

  // Arms the watchdog and reports the status now and every 10 s.
  void Start();
  // Sends the status line now (after a reload).
  void ReportNow();
  void Stop();

 private:
  void ArmWatchdog();
  void Report();

  TimerClock& clock_;
  const Notifier& notify_;
  Metrics& metrics_;
  const LoopHealth& loop_;
  store::Store& reads_;
  std::optional<TimerId> watchdog_, status_;  // each set until it fires
  bool stopped_ = false;
};

}  // namespace hubwatch::service
