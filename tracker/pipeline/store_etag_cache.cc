#include "tracker/pipeline/store_etag_cache.h"

#include <nlohmann/json.hpp>

namespace hubwatch::pipeline {

StoreEtagCache::StoreEtagCache(store::Store& store, const Clock& clock, size_t max_body_bytes)
    : store_(store), clock_(clock), max_body_bytes_(max_body_bytes) {}

std::optional<hub::CachedResponse> StoreEtagCache::Lookup(std::string_view key) {
  Result<std::optional<store::CachedResponse>> r =
      store_.http_cache().Get(std::string(key));
  if (!r.ok() || !*r) return std::nullopt;  // a cache miss costs a full request, nothing more
  // The headers column holds [[name, value], ...] as Store() writes it. A damaged row is a
  // miss too: answering a 304 with the body but not all of its headers would be wrong, and the
  // full response that follows rewrites the row.
  const nlohmann::json headers = nlohmann::json::parse((*r)->headers, nullptr, false);
  if (!headers.is_array()) return std::nullopt;
  hub::CachedResponse out;
  for (const nlohmann::json& h : headers) {
    if (!h.is_array() || h.size() != 2 || !h[0].is_string() || !h[1].is_string()) {
      return std::nullopt;
    }
    out.headers.Add(h[0].get<std::string>(), h[1].get<std::string>());
  }
  out.etag = (*r)->etag;
  out.body = std::move((*r)->body);
  return out;
}

void StoreEtagCache::Store(std::string key, hub::CachedResponse response) {
  if (response.body.size() > max_body_bytes_) return;
  nlohmann::json headers = nlohmann::json::array();
  for (const auto& [name, value] : response.headers.entries()) headers.push_back({name, value});
  // A failed write only loses a validator; the next request is a full one.
  (void)store_.http_cache().Put(
      key,
      {response.etag, std::move(response.body),
       headers.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)},
      clock_.UnixSeconds());
}

}  // namespace hubwatch::pipeline
