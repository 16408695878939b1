#pragma once

// Server-Sent Events framing for GET /api/v1/stream: each advisory is
//   id: <seq>
//   event: advisory
//   data: {"id": ..., "seq": ..., "repo": ..., "revision": ..., "kind": ..., ...}
// with the advisory seq as the event id, so a client reconnecting with Last-Event-ID resumes
// after the last one it saw. Comments (": ...") are heartbeats. Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/store/records.h"

namespace hubwatch::api {

// The first bytes of a stream: the reconnect delay and a comment.
std::string SseStart(int64_t retry_ms);
std::string SseEvent(const store::AdvisoryRecord& advisory);
std::string SseHeartbeat();
// A Last-Event-ID value: a decimal seq >= 0 (surrounding spaces allowed); nullopt otherwise.
std::optional<int64_t> ParseEventId(std::string_view text);

}  // namespace hubwatch::api
