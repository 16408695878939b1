#pragma once

// HttpRequest / HttpReply: the API's view of one HTTP exchange, free of Boost.Beast so that the
// router, the handlers and their tests never include it. Plain value types.
//
// Every error reply carries a JSON body {"error": "<one line>"} (HttpReply::Error).
//
// Reply bodies are capped at kMaxReplyBytes: HttpReply::Json never builds a longer text (it
// answers 500 saying how long the reply would have been), and the session refuses any other
// body over the cap the same way. A connection holds at most one reply, so replies waiting
// for slow readers take at most (max_connections + kProbeSlots) x kMaxReplyBytes.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hubwatch::api {

inline constexpr size_t kMaxReplyBytes = 8u << 20;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target before '?', still percent-encoded
  std::string query;   // the target after '?' ("" when none)
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;

  // The first header named `name` (lower case), if any.
  std::optional<std::string_view> header(std::string_view name) const;
};

// Where a Server-Sent Events stream starts and what it carries.
struct EventStreamStart {
  int64_t after_seq = 0;         // send the advisories with seq > this
  int64_t after_follow_seq = 0;  // and the follow events with seq > this
  std::string repo;              // "" = every repo
  std::string kind;              // "" = every kind, "tracked"/"untracked": those events only
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type/-Length
  // Set by GET /api/v1/stream: the connection becomes a Server-Sent Events stream (status 200,
  // text/event-stream); `body`, if any, is written first.
  std::optional<EventStreamStart> event_stream;

  // `body` dumped compactly; invalid UTF-8 in strings becomes U+FFFD (never throws). Over
  // kMaxReplyBytes: a 500 error instead.
  static HttpReply Json(int status, const nlohmann::json& body);
  // 500: a reply of `size` bytes is over the cap (`what` names it: "the reply").
  static HttpReply TooLarge(std::string_view what, size_t size, size_t cap);
  // {"error": message}
  static HttpReply Error(int status, std::string_view message);
};

// json.dump() that never throws: invalid UTF-8 is replaced by U+FFFD.
std::string DumpJson(const nlohmann::json& value);
// DumpJson, unless the text would be longer than `max` bytes: then nullopt, with `*size` (if
// given) the length it would have had. The text held never grows past `max`.
std::optional<std::string> DumpJsonWithin(const nlohmann::json& value, size_t max,
                                          size_t* size = nullptr);

}  // namespace hubwatch::api
