#include "tracker/store/http_cache_store.h"

#include "tracker/store/connection.h"

namespace hubwatch::store {

Result<std::optional<CachedResponse>> HttpCacheStore::Get(const std::string& url) {
  HW_PREPARE(q, "SELECT etag, body, headers FROM http_cache WHERE url = ?1");
  q.Bind(1, url);
  return OptionalRow(q, "reading the HTTP cache", [](Statement& r) {
    return CachedResponse{r.Text(0), r.Blob(1), r.Text(2)};
  });
}

Status HttpCacheStore::Put(const std::string& url, const CachedResponse& response, int64_t now) {
  HW_PREPARE(q,
             "INSERT INTO http_cache (url, etag, body, headers, stored_at) "
             "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, "
             "body = excluded.body, headers = excluded.headers, stored_at = excluded.stored_at");
  return q.Bind(1, url)
      .Bind(2, response.etag)
      .BindBlob(3, response.body)
      .Bind(4, response.headers)
      .Bind(5, now)
      .Run("writing the HTTP cache");
}

}  // namespace hubwatch::store
