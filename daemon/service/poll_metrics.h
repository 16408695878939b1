#pragma once

// The daemon's metrics about polling and the Hub, from what the poller and the hub client
// report: polls by outcome and their duration, revisions, changes and advisories, per-revision
// ingest latency, and the client's requests by kind and status, bytes and waits.
//
// Thread safety: the network thread (the hub client's Accounting lives there).

#include <cstdint>
#include <map>
#include <utility>

namespace hubwatch::hub {
class Accounting;
}
namespace hubwatch::pipeline {
struct PollReport;
}

namespace hubwatch::service {

class Metrics;

class PollMetrics {
 public:
  explicit PollMetrics(Metrics& metrics) : metrics_(metrics) {}

  // One poll ended after `seconds`.
  void RecordPoll(const pipeline::PollReport& report, double seconds);
  // Brings the request, byte and wait counters up to the client's cumulative accounting.
  void SyncHub(const hub::Accounting& accounting);

 private:
  Metrics& metrics_;
  std::map<std::pair<int, int>, uint64_t> requests_seen_;  // (kind, status) -> count
  uint64_t sent_seen_ = 0, received_seen_ = 0;
  int64_t waited_ms_seen_ = 0;
};

}  // namespace hubwatch::service
