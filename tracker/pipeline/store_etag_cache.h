#pragma once

// StoreEtagCache: the hub client's conditional-request memory kept in the store's http_cache
// table, so validators survive restarts and an unchanged repo costs one 304 even on a fresh
// process. Bodies over max_body_bytes are not kept (large files are content-addressed blobs
// already). Thread safety: like the Store, used from one thread (the hub client's loop).

#include <cstddef>
#include <cstdint>

#include "estimator/base/clock.h"
#include "tracker/hub/etag_cache.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

class StoreEtagCache final : public hub::EtagCache {
 public:
  // REQUIRES: store and clock outlive the cache.
  StoreEtagCache(store::Store& store, const Clock& clock, size_t max_body_bytes = 1 << 20);
  std::optional<hub::CachedResponse> Lookup(std::string_view key) override;
  void Store(std::string key, hub::CachedResponse response) override;

 private:
  store::Store& store_;
  const Clock& clock_;
  size_t max_body_bytes_;
};

}  // namespace hubwatch::pipeline
