#include "daemon/api/session_metrics.h"

#include "daemon/service/metrics.h"

namespace hubwatch::api {
namespace {

const std::vector<double>& LatencyBounds() {
  static const std::vector<double> bounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                             0.05,   0.1,   0.25,   0.5,   1,    2.5};
  return bounds;
}

}  // namespace

SessionMetrics::SessionMetrics(service::Metrics& metrics)
    : metrics_(metrics),
      connections_(metrics.gauge("hubwatch_http_connections", "Open HTTP API connections")),
      rejected_(metrics.counter("hubwatch_http_connections_rejected_total",
                                "Connections closed at once because max_connections were open")),
      streams_(metrics.gauge("hubwatch_sse_streams", "Open Server-Sent Events streams")),
      streams_rejected_(metrics.counter("hubwatch_sse_streams_rejected_total",
                                        "Event streams refused (503) over the stream limit")),
      events_(metrics.counter("hubwatch_sse_events_total", "Advisories sent on event streams")) {}

void SessionMetrics::Request(const std::string& route, const std::string& method, int status,
                             std::chrono::steady_clock::duration took) {
  const std::string code = std::to_string(status);
  // Clients choose the method token: anything else shares one label value.
  static const char* const kMethods[] = {"GET",   "POST", "DELETE", "PUT",
                                         "PATCH", "HEAD", "OPTIONS"};
  std::string m = "other";
  for (const char* known : kMethods) {
    if (method == known) m = known;
  }
  const std::string key = route + '\n' + m + '\n' + code;
  service::Counter*& counter = requests_[key];
  if (!counter) {
    counter = &metrics_.counter("hubwatch_http_requests_total", "HTTP API requests answered",
                                {{"route", route}, {"method", m}, {"status", code}});
  }
  counter->Add();
  service::Histogram*& histogram = latency_[route];
  if (!histogram) {
    histogram = &metrics_.histogram("hubwatch_http_request_duration_seconds",
                                    "Time from a request's header to its reply", LatencyBounds(),
                                    {{"route", route}});
  }
  histogram->Observe(std::chrono::duration<double>(took).count());
}

void SessionMetrics::Connections(size_t open) { connections_.Set(static_cast<double>(open)); }

void SessionMetrics::Rejected() { rejected_.Add(); }

void SessionMetrics::Streams(int delta) {
  open_streams_ += delta;
  streams_.Set(static_cast<double>(open_streams_));
}

void SessionMetrics::StreamRejected() { streams_rejected_.Add(); }

void SessionMetrics::StreamsClosed() {
  open_streams_ = 0;
  streams_.Set(0);
}

void SessionMetrics::StreamEvents(size_t n) { events_.Add(n); }

}  // namespace hubwatch::api
