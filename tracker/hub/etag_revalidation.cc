#include "tracker/hub/etag_revalidation.h"

#include <nlohmann/json.hpp>

namespace hubwatch::hub {
namespace {

// Headers not worth caching: they describe one response, not the resource.
bool IsPerResponseHeader(std::string_view name) {
  for (const char* skip : {"Date", "RateLimit", "RateLimit-Policy", "Set-Cookie", "X-Request-Id",
                           "Connection", "Keep-Alive", "Authorization"}) {
    if (EqualsIgnoreCase(name, skip)) return true;
  }
  return false;
}

}  // namespace

std::optional<CachedResponse> CacheEntryFor(const HttpResponse& response,
                                            const HttpHeaders& identity) {
  std::optional<std::string_view> etag = identity.Get("X-Linked-Etag");
  if (!etag) etag = response.headers.Get("ETag");
  if (!etag || etag->empty()) return std::nullopt;
  if (auto type = response.headers.Get("Content-Type");
      type && type->find("json") != std::string_view::npos &&
      !nlohmann::json::accept(response.body)) {
    return std::nullopt;
  }
  CachedResponse entry;
  entry.etag = std::string(*etag);
  entry.body = response.body;
  for (const auto& [name, value] : response.headers.entries()) {
    if (!IsPerResponseHeader(name)) entry.headers.Add(name, value);
  }
  for (const auto& [name, value] : identity.entries()) {
    if (!entry.headers.Has(name)) entry.headers.Add(name, value);
  }
  return entry;
}

HttpResponse CachedOk(const CachedResponse& cached, const std::string& url) {
  HttpResponse response;
  response.status = 200;
  response.url = url;
  response.body = cached.body;
  response.headers = cached.headers;
  return response;
}

HttpHeaders CachedIdentity(const CachedResponse& cached, const HttpHeaders& identity) {
  HttpHeaders result = identity;
  if (!identity.Has("X-Repo-Commit")) {
    for (const char* name : {"X-Repo-Commit", "X-Linked-Etag", "X-Linked-Size"}) {
      if (auto v = cached.headers.Get(name)) result.Add(name, std::string(*v));
    }
  }
  return result;
}

}  // namespace hubwatch::hub
