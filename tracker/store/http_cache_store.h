#pragma once

// HttpCacheStore: the Hub responses kept for conditional requests (If-None-Match), by URL: the
// validator, the body and the headers to replay on a 304.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database, which
// must outlive it.

#include <cstdint>
#include <optional>
#include <string>

#include "estimator/base/result.h"
#include "tracker/store/database.h"

namespace hubwatch::store {

struct CachedResponse {
  std::string etag;
  std::string body;
  std::string headers;  // JSON array of [name, value] pairs
};

class HttpCacheStore {
 public:
  explicit HttpCacheStore(Database& db) : db_(db) {}

  Result<std::optional<CachedResponse>> Get(const std::string& url);
  // Replaces what `url` had.
  Status Put(const std::string& url, const CachedResponse& response, int64_t now);

 private:
  Database& db_;
};

}  // namespace hubwatch::store
