#include "daemon/api/sse.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/http_message.h"

namespace hubwatch::api {

std::string SseStart(int64_t retry_ms) {
  return "retry: " + std::to_string(retry_ms) + "\n: hubwatch advisories\n\n";
}

namespace {

std::string Position(int64_t advisory_seq, int64_t follow_seq) {
  return std::to_string(advisory_seq) + (follow_seq > 0 ? "." + std::to_string(follow_seq) : "");
}

}  // namespace

std::string SseEvent(const store::AdvisoryRecord& advisory, int64_t follow_seq) {
  nlohmann::json data = AdvisoryEntryJson(advisory);
  data["url"] = "/v1/vulns/" + advisory.id;
  // Compact JSON never holds a raw newline, so the data is one line.
  return "id: " + Position(advisory.seq, follow_seq) + "\nevent: advisory\ndata: " +
         DumpJson(data) + "\n\n";
}

std::string SseFollowEvent(const store::FollowEvent& e, int64_t advisory_seq) {
  const nlohmann::json data = FollowEventJson(e);
  return "id: " + Position(advisory_seq, e.seq) + "\nevent: " + (e.kind == "tracked" ? "tracked"
                                                                                     : "untracked") +
         "\ndata: " + DumpJson(data) + "\n\n";
}

std::string SseHeartbeat() { return ": keep-alive\n\n"; }

std::optional<int64_t> ParseEventId(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0) {
    return std::nullopt;
  }
  return v;
}

std::optional<StreamPosition> ParseStreamPosition(std::string_view text) {
  const size_t dot = text.find('.');
  std::optional<int64_t> advisory = ParseEventId(text.substr(0, dot));
  if (!advisory) return std::nullopt;
  if (dot == std::string_view::npos) return StreamPosition{*advisory, 0};
  std::optional<int64_t> follow = ParseEventId(text.substr(dot + 1));
  if (!follow) return std::nullopt;
  return StreamPosition{*advisory, *follow};
}

}  // namespace hubwatch::api
