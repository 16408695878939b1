#pragma once

// The store's gauges in /metrics: the store thread's queue and how long it has been busy (read
// at every scrape, so a store stuck behind another process's lock shows at once), and what the
// database holds for later (webhook deliveries pending, advisories held), read when the service
// reports its status.

namespace hubwatch::store {
class Store;
}

namespace hubwatch::service {

class Metrics;
class StoreAccess;

// REQUIRES: `store` outlives every render of `metrics`.
void RefreshStoreGaugesAtEveryScrape(Metrics& metrics, const StoreAccess& store);
// REQUIRES: `reads` is the calling thread's connection.
void ReportStoreContents(Metrics& metrics, store::Store& reads);

}  // namespace hubwatch::service
