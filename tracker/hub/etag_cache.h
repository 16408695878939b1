#pragma once

// Conditional-request memory: URL -> (ETag, body, headers). The client sends If-None-Match from
// it and answers a 304 with the cached body. An interface so the SQLite store can
// replace the in-memory one. Entries never hold credentials: keys are URLs, and the client never
// stores Authorization or Set-Cookie.

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/hub/http_types.h"

namespace hubwatch::hub {

struct CachedResponse {
  std::string etag;  // as the server sent it, W/ and quotes kept
  std::string body;
  HttpHeaders headers;  // the 200's headers, minus per-response ones (Date, RateLimit, ...)
};

// Thread safety: implementations must allow calls from the client's loop thread while other
// threads read; InMemoryEtagCache locks internally.
class EtagCache {
 public:
  virtual ~EtagCache() = default;
  virtual std::optional<CachedResponse> Lookup(std::string_view key) = 0;
  virtual void Store(std::string key, CachedResponse response) = 0;
};

// Holds at most max_bytes of bodies; evicts the oldest stored entries first.
class InMemoryEtagCache final : public EtagCache {
 public:
  explicit InMemoryEtagCache(size_t max_bytes = 64u << 20);
  ~InMemoryEtagCache() override;
  std::optional<CachedResponse> Lookup(std::string_view key) override;
  void Store(std::string key, CachedResponse response) override;
  size_t size() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace hubwatch::hub
