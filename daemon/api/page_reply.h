#pragma once

// Replies of the pages a person reads (routes_page*.cc): the security headers every page
// carries, conditional GET on a weak ETag (304 on a matching If-None-Match), and gzip when the
// client accepts it. Internal to daemon/api.

#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/api/http_message.h"

namespace hubwatch::api {

inline constexpr const char kPageCsp[] =
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'";

// A weak ETag over `parts` (each hashed with its length) and the code version.
class PageTag {
 public:
  PageTag& Add(std::string_view part);
  PageTag& Add(int64_t value) { return Add(std::to_string(value)); }
  std::string Value() const;  // W/"<16 hex>"

 private:
  uint64_t hash_ = 1469598103934665603ull;
};

// True when the request's If-None-Match lists `etag` (or is "*").
bool NotModified(const HttpRequest& request, const std::string& etag);

// A page body as sent: gzip-compressed when the client accepts it and it is worth it.
struct EncodedBody {
  std::string bytes;
  bool gzip = false;
};

// Whether `request` accepts gzip (Accept-Encoding).
bool AcceptsGzip(const HttpRequest& request);
// `body`, compressed when `gzip` and long enough to gain (a failed compression sends it as is).
EncodedBody EncodeBody(std::string body, bool gzip);

// The page reply of an encoded body: the security headers, Vary, the ETag when not empty.
HttpReply PageReply(int status, std::string content_type, EncodedBody body,
                    const std::string& etag);

// The page reply: `body` of `content_type` ("text/html; charset=utf-8"), the security headers,
// the ETag when not empty, and gzip when the client accepts it. With a matching If-None-Match,
// a 304 without body instead.
HttpReply PageReply(const HttpRequest& request, int status, std::string content_type,
                    std::string body, const std::string& etag);

// An error as a small HTML page (the JSON error is for the API).
HttpReply PageError(const HttpRequest& request, int status, std::string_view message);

}  // namespace hubwatch::api
