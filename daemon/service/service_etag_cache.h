#pragma once

// ServiceEtagCache: the hub client's conditional-request memory in the store, for the daemon:
// lookups read the network thread's connection, stores go through the store thread (a lost
// write only costs a full request later). Bodies over 1 MiB are not kept.
// Thread safety: network thread only.

#include <cstdint>

#include "store_access.h"
#include "tracker/hub/etag_cache.h"

namespace hubwatch::service {

class ServiceEtagCache final : public hub::EtagCache {
 public:
  // REQUIRES: access outlives the cache.
  ServiceEtagCache(StoreAccess& access, int64_t (*now)());
  std::optional<hub::CachedResponse> Lookup(std::string_view key) override;
  void Store(std::string key, hub::CachedResponse response) override;

 private:
  StoreAccess& access_;
  int64_t (*now_)();
};

}  // namespace hubwatch::service
