#pragma once

// LoopHealth: what the runtime reports of the poll loop (daemon/schedule implements it): whether
// its timer still runs, its one-line status, and the polls in flight. StatusReporter reads it for
// systemd's watchdog, STATUS= and the polls-in-flight gauge.
//
// Thread safety: read on the network thread only, like the loop itself.

#include <cstddef>
#include <string>

namespace hubwatch::service {

class LoopHealth {
 public:
  virtual ~LoopHealth() = default;
  // Whether the loop's timer ran lately: false when it is wedged (the watchdog stops pinging).
  virtual bool alive() const = 0;
  // "watching 12 repos; 1 polling; last poll 14s ago; 0 errors"
  virtual std::string StatusLine() const = 0;
  virtual size_t polls_in_flight() const = 0;
};

}  // namespace hubwatch::service
