#include "daemon/api/sse.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/http_message.h"

namespace hubwatch::api {

std::string SseStart(int64_t retry_ms) {
  return "retry: " + std::to_string(retry_ms) + "\n: hubwatch advisories\n\n";
}

std::string SseEvent(const store::AdvisoryRecord& advisory) {
  nlohmann::json data = AdvisoryEntryJson(advisory);
  data["url"] = "/v1/vulns/" + advisory.id;
  // Compact JSON never holds a raw newline, so the data is one line.
  return "id: " + std::to_string(advisory.seq) + "\nevent: advisory\ndata: " + DumpJson(data) +
         "\n\n";
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

}  // namespace hubwatch::api
