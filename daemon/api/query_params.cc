#include "daemon/api/query_params.h"

#include <charconv>

#include "daemon/api/router.h"

namespace hubwatch::api {

Result<QueryParams> QueryParams::Parse(std::string_view raw) {
  QueryParams out;
  size_t start = 0;
  while (start < raw.size()) {
    size_t amp = raw.find('&', start);
    if (amp == std::string_view::npos) amp = raw.size();
    const std::string_view item = raw.substr(start, amp - start);
    start = amp + 1;
    if (item.empty()) continue;
    if (out.items_.size() == kMaxParams) {
      return Error::InvalidInput("more than " + std::to_string(kMaxParams) + " parameters");
    }
    const size_t eq = item.find('=');
    std::optional<std::string> name = PercentDecode(item.substr(0, eq), true);
    std::optional<std::string> value =
        eq == std::string_view::npos ? std::string() : PercentDecode(item.substr(eq + 1), true);
    if (!name || !value) {
      return Error::InvalidInput("malformed query parameter '" +
                                 std::string(item.substr(0, std::min<size_t>(item.size(), 64))) +
                                 "'");
    }
    out.items_.emplace_back(std::move(*name), std::move(*value));
  }
  return out;
}

std::optional<std::string> QueryParams::Get(std::string_view name) const {
  for (const auto& [k, v] : items_) {
    if (k == name) return v;
  }
  return std::nullopt;
}

Result<std::optional<int64_t>> QueryParams::Int(std::string_view name, int64_t min,
                                                int64_t max) const {
  std::optional<std::string> text = Get(name);
  if (!text) return std::optional<int64_t>();
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < min || v > max) {
    return Error::InvalidInput(std::string(name) + " must be an integer from " +
                               std::to_string(min) + " to " + std::to_string(max));
  }
  return std::optional<int64_t>(v);
}

}  // namespace hubwatch::api
