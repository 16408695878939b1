#pragma once

// Server-Sent Events framing for GET /api/v1/stream: each advisory is
//   id: <seq>
//   event: advisory
//   data: {"id": ..., "seq": ..., "repo": ..., "revision": ..., "kind": ..., ...}
// and each follow event (a follow rule tracked or untracked a repo)
//   id: <advisory seq>.<follow seq>
//   event: tracked | untracked
//   data: {"seq": ..., "repo": ..., "rule": ..., "sha": ..., "reason": ..., "at": ...}
// The event id is the stream's position in both sequences ("<advisory seq>" alone while no
// follow event exists), so a client reconnecting with Last-Event-ID resumes after the last
// event it saw. Comments (": ...") are heartbeats. Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/store/records.h"

namespace hubwatch::api {

// The first bytes of a stream: the reconnect delay and a comment.
std::string SseStart(int64_t retry_ms);
// `follow_seq`: the stream's position among follow events (0: none exists).
std::string SseEvent(const store::AdvisoryRecord& advisory, int64_t follow_seq = 0);
std::string SseFollowEvent(const store::FollowEvent& event, int64_t advisory_seq);
std::string SseHeartbeat();
// A Last-Event-ID value: a decimal seq >= 0 (surrounding spaces allowed); nullopt otherwise.
std::optional<int64_t> ParseEventId(std::string_view text);
// A stream position: "<advisory seq>" or "<advisory seq>.<follow seq>".
struct StreamPosition {
  int64_t advisory = 0;
  int64_t follow = 0;
};
std::optional<StreamPosition> ParseStreamPosition(std::string_view text);

}  // namespace hubwatch::api
