#pragma once

// Revalidation through the ETag cache (etag_cache.h): what of a 200 the cache keeps, and what a
// 304 answered from the cache stands for. The validator is the file's identity from the Hub hop
// (X-Linked-Etag) for resolve, the response's ETag for the API. Entries never keep per-response
// headers (Date, RateLimit, Set-Cookie, Authorization, ...).
// Pure functions; thread-safe.

#include <optional>
#include <string>

#include "tracker/hub/etag_cache.h"
#include "tracker/hub/http_types.h"

namespace hubwatch::hub {

// The entry to keep for a 200 `response` whose identity headers (from the endpoint's origin) are
// `identity`. nullopt when it has no validator, or a JSON body that does not parse (cut short, a
// wrong Content-Length, altered on the way): later 304s would replay it and the repo would fail
// until its ETag changes.
std::optional<CachedResponse> CacheEntryFor(const HttpResponse& response,
                                            const HttpHeaders& identity);

// The 200 that a 304 for `url` stands for: the cached body and headers.
HttpResponse CachedOk(const CachedResponse& cached, const std::string& url);

// The identity headers of a 304: `identity` when the exchange's hops carried X-Repo-Commit,
// else the cached response's identity headers after it.
HttpHeaders CachedIdentity(const CachedResponse& cached, const HttpHeaders& identity);

}  // namespace hubwatch::hub
