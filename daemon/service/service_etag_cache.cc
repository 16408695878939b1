#include "service_etag_cache.h"

#include "tracker/pipeline/store_etag_cache.h"

namespace hubwatch::service {

constexpr size_t kMaxBody = 1 << 20;

ServiceEtagCache::ServiceEtagCache(StoreAccess& access, int64_t (*now)())
    : access_(access), now_(now) {}

std::optional<hub::CachedResponse> ServiceEtagCache::Lookup(std::string_view key) {
  return pipeline::StoreEtagCache(access_.reads(), nullptr).Lookup(key);
}

void ServiceEtagCache::Store(std::string key, hub::CachedResponse response) {
  if (response.body.size() > kMaxBody) return;
  access_.Write(
      [key = std::move(key), response = std::move(response),
       now = now_()](store::Store& w) mutable {
        pipeline::StoreEtagCache(w, [now] {
          return now;
        }).Store(std::move(key), std::move(response));
        return Status::Ok();
      },
      nullptr);
}

}  // namespace hubwatch::service
