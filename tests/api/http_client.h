#pragma once

// A small blocking HTTP/1.1 client for the API tests, on plain POSIX sockets to 127.0.0.1 only
// (no Beast: the server under test is the Beast code). Requests send "Connection: close" and
// read to EOF, so every response is complete and framing is checked by Content-Length.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace hubwatch::api::testing {

struct HttpResponse {
  int status = 0;  // 0: no parseable response (connection closed, reset)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string raw;

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  // The body as JSON (discarded when it is not).
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

HttpResponse Request(uint16_t port, const std::string& method, const std::string& target,
                     const std::string& body = "", const Headers& headers = {});

// A connection to 127.0.0.1:port for hand-written bytes.
class RawConnection {
 public:
  // receive_buffer > 0: SO_RCVBUF set before connecting (a small window, so that unread replies
  // fill the server's socket buffers after a few KiB).
  explicit RawConnection(uint16_t port, int receive_buffer = 0);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  // false when the peer closed or reset.
  bool Send(const std::string& bytes);
  // Reads until `done(received)` holds, EOF or `timeout`; returns everything received.
  std::string ReadUntil(const std::function<bool(const std::string&)>& done,
                        std::chrono::milliseconds timeout);
  std::string ReadToEof(std::chrono::milliseconds timeout);
  // true when the peer closed the connection within `timeout` (EOF or reset).
  bool ClosedWithin(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
  bool eof_ = false;
};

// Parses one response from `raw` (status line, headers, Content-Length body). `to_head`: the
// reply to a HEAD request, whose Content-Length describes a body that is not sent.
HttpResponse ParseResponse(const std::string& raw, bool to_head = false);

// The "error" string of a JSON error body; "" when the body is not one.
inline std::string ErrorOf(const HttpResponse& r) {
  const nlohmann::json j = r.json();
  return j.is_object() && j.contains("error") && j["error"].is_string()
             ? j["error"].get<std::string>()
             : "";
}

}  // namespace hubwatch::api::testing
