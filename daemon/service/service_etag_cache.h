#pragma once

// ServiceEtagCache: the hub client's conditional-request memory in the store, for the daemon:
// lookups read the network thread's connection, stores go through the store thread (a lost
// write only costs a full request later). Bodies over 1 MiB are not kept.
// Thread safety: network thread only.

#include <cstdint>

#include "daemon/service/store_access.h"
#include "estimator/base/clock.h"
#include "tracker/hub/etag_cache.h"

namespace hubwatch::service {

class ServiceEtagCache final : public hub::EtagCache {
 public:
  // REQUIRES: access and clock outlive the cache; clock is read on the store thread too.
  ServiceEtagCache(StoreAccess& access, const Clock& clock);
  std::optional<hub::CachedResponse> Lookup(std::string_view key) override;
  void Store(std::string key, hub::CachedResponse response) override;

 private:
  StoreAccess& access_;
  const Clock& clock_;
};

}  // namespace hubwatch::service
