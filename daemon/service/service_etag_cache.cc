#include "daemon/service/service_etag_cache.h"

#include "tracker/pipeline/store_etag_cache.h"

namespace hubwatch::service {

constexpr size_t kMaxBody = 1 << 20;

ServiceEtagCache::ServiceEtagCache(StoreAccess& access, const Clock& clock)
    : access_(access), clock_(clock) {}

std::optional<hub::CachedResponse> ServiceEtagCache::Lookup(std::string_view key) {
  return pipeline::StoreEtagCache(access_.reads(), clock_).Lookup(key);
}

void ServiceEtagCache::Store(std::string key, hub::CachedResponse response) {
  if (response.body.size() > kMaxBody) return;
  access_.Write(
      [key = std::move(key), response = std::move(response),
       &clock = clock_](store::Store& w) mutable {
        pipeline::StoreEtagCache(w, clock).Store(std::move(key), std::move(response));
        return Status::Ok();
      },
      nullptr);
}

}  // namespace hubwatch::service
