#include "daemon/schedule/poll_metrics.h"

#include <algorithm>
#include <string>

#include "daemon/service/metrics.h"
#include "tracker/hub/accounting.h"
#include "tracker/pipeline/poller.h"

namespace hubwatch::schedule {
namespace {

// The Hub's rate-limit bucket of a request: "resolvers" for file reads (and their CDN hops),
// "api" for the rest.
std::string BucketOf(hub::RequestKind kind) {
  switch (kind) {
    case hub::RequestKind::kResolveHead:
    case hub::RequestKind::kResolveGet:
    case hub::RequestKind::kRangeRead:
      return "resolvers";
    default:
      return "api";
  }
}

}  // namespace

void PollMetrics::RecordPoll(const pipeline::PollReport& r, double seconds) {
  metrics_
      .histogram("hubwatch_poll_seconds", "time to poll one repo, ingestion included",
                 {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60})
      .Observe(seconds);
  const char* outcome = r.ok ? "ok" : r.abandoned ? "abandoned" : "error";
  metrics_.counter("hubwatch_polls_total", "polls by outcome", {{"outcome", outcome}}).Add();
  metrics_.counter("hubwatch_revisions_ingested_total", "revisions ingested")
      .Add(static_cast<uint64_t>(r.revisions));
  service::Histogram& ingest = metrics_.histogram(
      "hubwatch_ingest_seconds", "time to ingest one revision: tree read, fetches, diffs, commit",
      {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  for (double s : r.ingest_seconds) ingest.Observe(s);
  metrics_.counter("hubwatch_changes_total", "changes recorded")
      .Add(static_cast<uint64_t>(r.changes));
  metrics_.counter("hubwatch_advisories_total", "advisories recorded")
      .Add(static_cast<uint64_t>(r.advisories));
  metrics_.counter("hubwatch_advisories_published_total", "advisories published")
      .Add(static_cast<uint64_t>(r.published));
  if (r.history_rewritten) {
    metrics_.counter("hubwatch_history_rewrites_total", "history rewrites seen").Add();
  }
}

void PollMetrics::SyncHub(const hub::Accounting& accounting) {
  const int64_t now = clock_.UnixSeconds();
  if (const int64_t start = now - now % std::max<int64_t>(1, window_s_); start != window_start_) {
    window_start_ = start;
    for (auto& [bucket, n] : window_requests_) n = 0;
  }
  accounting.ForEach([this](hub::RequestKind kind, int status, uint64_t n) {
    uint64_t& seen = requests_seen_[{static_cast<int>(kind), status}];
    if (n <= seen) return;
    window_requests_[BucketOf(kind)] += n - seen;
    metrics_
        .counter(
            "hubwatch_hub_requests_total", "requests to the Hub by kind and status (0: none)",
            {{"kind", std::string(hub::RequestKindName(kind))}, {"status", std::to_string(status)}})
        .Add(n - seen);
    seen = n;
  });
  for (const auto& [bucket, n] : window_requests_) {
    metrics_
        .gauge("hubwatch_hub_window_requests",
               "requests to the Hub in the current quota window, by bucket", {{"bucket", bucket}})
        .Set(static_cast<double>(n));
  }
  auto add = [this](const char* name, const char* help, uint64_t now, uint64_t& seen) {
    if (now > seen) metrics_.counter(name, help).Add(now - seen);
    seen = std::max(seen, now);
  };
  add("hubwatch_hub_bytes_sent_total", "bytes sent to the Hub", accounting.bytes_sent(),
      sent_seen_);
  add("hubwatch_hub_bytes_received_total", "bytes received from the Hub",
      accounting.bytes_received(), received_seen_);
  const int64_t waited = accounting.waited().count();
  if (waited > waited_ms_seen_) {
    metrics_
        .counter("hubwatch_hub_wait_milliseconds_total",
                 "time Hub calls spent waiting: backoff, Retry-After and rate-limit pauses")
        .Add(static_cast<uint64_t>(waited - waited_ms_seen_));
    waited_ms_seen_ = waited;
  }
}

bool PollMetrics::RecordFinding(const pipeline::PollReport& r) {
  if (r.revisions == 0 || r.first_poll) return false;
  switch (r.trigger) {
    case store::PollTrigger::kListing:
    case store::PollTrigger::kWebhook:
      metrics_
          .counter("hubwatch_hints_used_total", "hinted polls that found a new revision",
                   {{"source", std::string(store::PollTriggerName(r.trigger))}})
          .Add();
      return false;
    case store::PollTrigger::kReconcile:
      metrics_
          .counter("hubwatch_hint_misses_total",
                   "reconcile polls that found a new revision no hint announced")
          .Add();
      return true;
    case store::PollTrigger::kPoll:
      return false;
  }
  return false;
}

}  // namespace hubwatch::schedule
