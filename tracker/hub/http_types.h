#pragma once

// Plain HTTP values exchanged with a Transport: a request to send, the response that came back,
// or the transport-level failure that stopped it. Value types: cheap to move, no shared state,
// safe to read from many threads at once.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hubwatch::hub {

enum class HttpMethod { kGet, kHead };

// Header fields in arrival order. Names keep their spelling; lookups ignore case.
class HttpHeaders {
 public:
  void Add(std::string name, std::string value);
  // Replaces every field called `name` with one field.
  void Set(std::string name, std::string value);
  void Remove(std::string_view name);
  // The first field called `name`, if any.
  std::optional<std::string_view> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b);
// `s` without leading and trailing spaces and tabs (HTTP's optional whitespace).
std::string_view TrimWhitespace(std::string_view s);
// A header value that is a decimal number (Content-Length, X-Linked-Size, Content-Range parts):
// digits only; nullopt for anything else, the empty value and overflow included.
std::optional<uint64_t> ParseHeaderNumber(std::string_view value);

struct HttpRequest {
  HttpMethod method = HttpMethod::kGet;
  std::string url;
  HttpHeaders headers;  // sent as given; the transport adds nothing secret
  std::chrono::milliseconds timeout{30'000};
  std::chrono::milliseconds connect_timeout{10'000};
  // The transport stops reading the body past this many bytes and reports body_limit_hit.
  uint64_t max_body_bytes = 64ull << 20;
  // true: offer gzip/br/zstd and decode. false: send "Accept-Encoding: identity".
  bool accept_compressed = false;
};

struct HttpResponse {
  int status = 0;
  HttpHeaders headers;
  std::string body;
  bool body_limit_hit = false;  // the body was cut at HttpRequest::max_body_bytes
  std::string url;              // the URL this response answers
  std::string http_version;     // "1.1", "2", ...
  uint64_t bytes_sent = 0;      // request line + headers + body, as written
  uint64_t bytes_received = 0;  // status line + headers + body, as read
  bool reused_connection = false;
};

enum class TransportErrorKind {
  kTimeout,          // no complete response in time
  kConnect,          // could not connect (refused, unreachable, DNS)
  kConnectionReset,  // the connection broke while sending or receiving
  kTruncated,        // the body ended before its declared length
  kProtocol,         // the peer did not speak valid HTTP
  kCertificate,      // TLS: the peer's certificate could not be verified (CA, name, dates)
  kShutdown,         // the transport was shut down before the transfer finished
  kOther,
};

struct TransportError {
  TransportErrorKind kind = TransportErrorKind::kOther;
  int curl_code = 0;
  std::string message;  // never contains request headers
};

std::string_view TransportErrorKindName(TransportErrorKind kind);

// What a transfer ended with: a response, or an error (and then `response` holds whatever
// arrived before the failure, often nothing).
struct TransportOutcome {
  HttpResponse response;
  std::optional<TransportError> error;
  bool ok() const { return !error.has_value(); }
};

}  // namespace hubwatch::hub
