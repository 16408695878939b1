#pragma once

// Notifier: the systemd notify protocol, written natively: one AF_UNIX datagram per message to
// $NOTIFY_SOCKET (a path, or "@name" for an abstract socket), newline-separated KEY=VALUE
// assignments (sd_notify(3)). Without $NOTIFY_SOCKET every call does nothing and succeeds.
// The watchdog interval comes from $WATCHDOG_USEC when $WATCHDOG_PID is unset or names us.
// Thread safety: const methods only; safe from any thread.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::service {

class Notifier {
 public:
  // From the process environment.
  static Notifier FromEnvironment();
  Notifier() = default;
  Notifier(std::string socket_path, std::optional<std::chrono::microseconds> watchdog)
      : socket_(std::move(socket_path)), watchdog_(watchdog) {}

  bool enabled() const { return !socket_.empty(); }
  std::optional<std::chrono::microseconds> watchdog() const { return watchdog_; }

  Status Ready() const { return Send("READY=1"); }
  // RELOADING=1 with MONOTONIC_USEC (CLOCK_MONOTONIC), as Type=notify-reload wants.
  Status Reloading() const;
  Status Stopping() const { return Send("STOPPING=1"); }
  Status Watchdog() const { return Send("WATCHDOG=1"); }
  Status StatusLine(std::string_view line) const;  // STATUS=<one line>
  Status Send(std::string_view message) const;

 private:
  std::string socket_;
  std::optional<std::chrono::microseconds> watchdog_;
};

}  // namespace hubwatch::service
