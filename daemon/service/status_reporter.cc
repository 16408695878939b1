#include "daemon/service/status_reporter.h"

#include <chrono>

#include "daemon/service/store_gauges.h"

namespace hubwatch::service {
namespace {

constexpr auto kStatusEvery = std::chrono::seconds(10);

}  // namespace

StatusReporter::StatusReporter(boost::asio::io_context& io, const Notifier& notify,
                               Metrics& metrics, const PollLoop& loop, store::Store& reads)
    : notify_(notify), metrics_(metrics), loop_(loop), reads_(reads), watchdog_(io), status_(io) {}

void StatusReporter::Start() {
  ArmWatchdog();
  Report();
}

void StatusReporter::ReportNow() { (void)notify_.StatusLine(loop_.StatusLine()); }

void StatusReporter::Stop() {
  stopped_ = true;
  watchdog_.cancel();
  status_.cancel();
}

void StatusReporter::ArmWatchdog() {
  const auto interval = notify_.watchdog();
  if (!interval) return;
  watchdog_.expires_after(*interval / 2);
  watchdog_.async_wait([this](auto ec) {
    if (ec || stopped_) return;
    if (loop_.alive()) (void)notify_.Watchdog();
    ArmWatchdog();
  });
}

void StatusReporter::Report() {
  if (stopped_) return;
  ReportNow();
  metrics_.gauge("hubwatch_polls_in_flight", "polls running")
      .Set(static_cast<double>(loop_.scheduler().in_flight()));
  ReportStoreContents(metrics_, reads_);
  status_.expires_after(kStatusEvery);
  status_.async_wait([this](auto ec) {
    if (!ec) Report();
  });
}

}  // namespace hubwatch::service
