#pragma once

// The daemon's metrics about polling and the Hub, from what the poller and the hub client
// report: polls by outcome and their duration, revisions, changes and advisories, per-revision
// ingest latency, and the client's requests by kind and status, bytes and waits, and per Hub
// bucket in the current quota window (hubwatch_hub_window_requests{bucket}: the Hub's windows
// are fixed 5-minute ones; ours start at multiples of window_s in Unix time).
//
// Thread safety: the network thread (the hub client's Accounting lives there).

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "estimator/base/clock.h"

namespace hubwatch::hub {
class Accounting;
}
namespace hubwatch::pipeline {
struct PollReport;
}

namespace hubwatch::service {
class Metrics;
}

namespace hubwatch::schedule {

class PollMetrics {
 public:
  PollMetrics(service::Metrics& metrics, const Clock& clock, int64_t window_s = 300)
      : metrics_(metrics), clock_(clock), window_s_(window_s) {}
  service::Metrics& metrics() { return metrics_; }

  // One poll ended after `seconds`.
  void RecordPoll(const pipeline::PollReport& report, double seconds);
  // What found the new revisions of a poll that found some (not a repo's first): a hint used,
  // or a reconcile's miss. True for a miss: no listing or webhook announced them.
  bool RecordFinding(const pipeline::PollReport& report);
  // Brings the request, byte and wait counters up to the client's cumulative accounting.
  void SyncHub(const hub::Accounting& accounting);

 private:
  service::Metrics& metrics_;
  const Clock& clock_;
  const int64_t window_s_;
  int64_t window_start_ = 0;
  std::map<std::string, uint64_t> window_requests_;        // bucket -> requests this window
  std::map<std::pair<int, int>, uint64_t> requests_seen_;  // (kind, status) -> count
  uint64_t sent_seen_ = 0, received_seen_ = 0;
  int64_t waited_ms_seen_ = 0;
};

}  // namespace hubwatch::schedule
