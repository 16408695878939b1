#include "daemon/service/store_gauges.h"

#include "daemon/service/metrics.h"
#include "daemon/service/store_access.h"

namespace hubwatch::service {

void RefreshStoreGaugesAtEveryScrape(Metrics& metrics, const StoreAccess& store) {
  metrics.BeforeRender([&metrics, &store] {
    metrics.gauge("hubwatch_store_pending_writes", "writes queued for the store thread")
        .Set(static_cast<double>(store.pending_writes()));
    metrics
        .gauge("hubwatch_store_busy_seconds",
               "how long the store thread has been on its current writes (0 when idle)")
        .Set(store.busy_for().count());
    metrics
        .gauge("hubwatch_store_poll_time_write_failures",
               "unchanged polls whose poll times could not be written (they are polled again)")
        .Set(static_cast<double>(store.failed_soon_writes()));
  });
}

void ReportStoreContents(Metrics& metrics, store::Store& reads) {
  if (Result<int64_t> pending = reads.outbox().CountPendingDeliveries(); pending.ok()) {
    metrics.gauge("hubwatch_outbox_pending", "webhook deliveries not yet delivered or failed")
        .Set(static_cast<double>(*pending));
  }
  if (Result<std::vector<store::HeldBurst>> held = reads.advisories().HeldBursts(); held.ok()) {
    int64_t n = 0;
    for (const store::HeldBurst& b : *held) n += b.advisories;
    metrics.gauge("hubwatch_advisories_held", "advisories waiting for their burst to settle")
        .Set(static_cast<double>(n));
  }
}

}  // namespace hubwatch::service
