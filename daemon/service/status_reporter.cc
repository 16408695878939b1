#include "daemon/service/status_reporter.h"

#include <chrono>
#include <utility>

#include "daemon/service/store_gauges.h"

namespace hubwatch::service {
namespace {

constexpr auto kStatusEvery = std::chrono::seconds(10);

}  // namespace

StatusReporter::StatusReporter(TimerClock& clock, const Notifier& notify, Metrics& metrics,
                               const LoopHealth& loop, store::Store& reads)
    : clock_(clock), notify_(notify), metrics_(metrics), loop_(loop), reads_(reads) {}

StatusReporter::~StatusReporter() { Stop(); }

void StatusReporter::Start() {
  ArmWatchdog();
  Report();
}

void StatusReporter::ReportNow() { (void)notify_.StatusLine(loop_.StatusLine()); }

void StatusReporter::Stop() {
  stopped_ = true;
  for (std::optional<TimerId>* timer : {&watchdog_, &status_}) {
    if (*timer) clock_.Cancel(*std::exchange(*timer, std::nullopt));
  }
}

void StatusReporter::ArmWatchdog() {
  const auto interval = notify_.watchdog();
  if (!interval || stopped_) return;
  watchdog_ = clock_.RunAt(clock_.Now() + *interval / 2, [this] {
    watchdog_.reset();
    if (loop_.alive()) (void)notify_.Watchdog();
    ArmWatchdog();
  });
}

void StatusReporter::Report() {
  if (stopped_) return;
  ReportNow();
  metrics_.gauge("hubwatch_polls_in_flight", "polls running")
      .Set(static_cast<double>(loop_.polls_in_flight()));
  ReportStoreContents(metrics_, reads_);
  status_ = clock_.RunAt(clock_.Now() + kStatusEvery, [this] {
    status_.reset();
    Report();
  });
}

}  // namespace hubwatch::service
