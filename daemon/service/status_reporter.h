#pragma once

// StatusReporter: what systemd and /metrics see of a running service. WATCHDOG=1 at half of
// WATCHDOG_USEC, only while the poll loop is alive (a wedged loop stops the pings and systemd
// acts); every 10 s STATUS= with the loop's status line, the polls-in-flight gauge and the
// store-content gauges.
//
// Thread safety: network thread only. REQUIRES: everything it borrows outlives it; `reads` is
// the network thread's store connection.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/service/metrics.h"
#include "daemon/service/notify.h"
#include "daemon/service/poll_loop.h"
#include "tracker/store/store.h"

namespace hubwatch::service {

class StatusReporter {
 public:
  StatusReporter(boost::asio::io_context& io, const Notifier& notify, Metrics& metrics,
                 const PollLoop& loop, store::Store& reads);

  // Arms the watchdog and reports the status now and every 10 s.
  void Start();
  // Sends the status line now (after a reload).
  void ReportNow();
  void Stop();

 private:
  void ArmWatchdog();
  void Report();

  const Notifier& notify_;
  Metrics& metrics_;
  const PollLoop& loop_;
  store::Store& reads_;
  boost::asio::steady_timer watchdog_, status_;
  bool stopped_ = false;
};

}  // namespace hubwatch::service
