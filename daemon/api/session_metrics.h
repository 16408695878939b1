#pragma once

// The API's own metrics, in the service's registry (daemon/service/metrics.h):
//   hubwatch_http_requests_total{route, method, status}      counter
//   hubwatch_http_request_duration_seconds{route}            histogram
//   hubwatch_http_connections                                gauge (open sessions)
//   hubwatch_http_connections_rejected_total                 counter (over max_connections)
//   hubwatch_sse_streams                                     gauge (open event streams)
//   hubwatch_sse_streams_rejected_total                      counter (over the stream limit)
//   hubwatch_sse_events_total                                counter (advisories sent)
// `route` is the router pattern ("/api/v1/repos/{ns}/{name}/badge"), "unmatched" or
// "invalid" (malformed, oversized), so the label set stays small.
//
// Thread safety: network thread only (the registry itself is thread-safe; the cache here is
// not).

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace hubwatch::service {
class Counter;
class Gauge;
class Histogram;
class Metrics;
}  // namespace hubwatch::service

namespace hubwatch::api {

class SessionMetrics {
 public:
  explicit SessionMetrics(service::Metrics& metrics);

  void Request(const std::string& route, const std::string& method, int status,
               std::chrono::steady_clock::duration took);
  void Connections(size_t open);
  void Rejected();
  void Streams(int delta);
  void StreamRejected();
  void StreamsClosed();  // all of them, at Stop()
  void StreamEvents(size_t n);

 private:
  service::Metrics& metrics_;
  // Registry lookups take a lock and build label sets; each series is looked up once.
  std::unordered_map<std::string, service::Counter*> requests_;
  std::unordered_map<std::string, service::Histogram*> latency_;
  service::Gauge& connections_;
  service::Counter& rejected_;
  service::Gauge& streams_;
  service::Counter& streams_rejected_;
  service::Counter& events_;
  int64_t open_streams_ = 0;
};

}  // namespace hubwatch::api
