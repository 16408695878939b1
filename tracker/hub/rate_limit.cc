#include "tracker/hub/rate_limit.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "tracker/hub/http_types.h"

namespace hubwatch::hub {
namespace {

std::optional<int64_t> ParseInt(std::string_view s) {
  s = TrimWhitespace(s);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// Splits `header` at ';' (outside quotes) into items.
std::vector<std::string_view> SplitItems(std::string_view header) {
  std::vector<std::string_view> items;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i <= header.size(); ++i) {
    if (i < header.size() && header[i] == '"') quoted = !quoted;
    if (i == header.size() || (!quoted && (header[i] == ';' || header[i] == ','))) {
      items.push_back(TrimWhitespace(header.substr(start, i - start)));
      if (i < header.size() && header[i] == ',') break;  // first list member only
      start = i + 1;
    }
  }
  return items;
}

std::optional<std::string> Unquote(std::string_view item) {
  if (item.size() >= 2 && item.front() == '"' && item.back() == '"') {
    return std::string(item.substr(1, item.size() - 2));
  }
  return std::nullopt;
}

int MonthIndex(std::string_view m) {
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (m == kMonths[static_cast<size_t>(i)]) return i;
  }
  return -1;
}

// The latest second a WallTime (system_clock, 64-bit nanoseconds) can hold.
constexpr int64_t kMaxWallSeconds =
    std::chrono::duration_cast<std::chrono::seconds>(WallTime::duration::max()).count();
// Retry-After is capped at 100 years: callers turn it into milliseconds and add it to the
// current WallTime, which an unbounded delay-seconds would overflow.
constexpr int64_t kMaxRetryAfterSeconds = int64_t{100} * 365 * 24 * 3600;

}  // namespace

std::optional<RateLimitState> ParseRateLimit(std::string_view header) {
  RateLimitState state;
  bool has_r = false, has_t = false;
  for (std::string_view item : SplitItems(header)) {
    if (auto name = Unquote(item)) {
      state.bucket = *name;
    } else if (item.starts_with("r=")) {
      auto v = ParseInt(item.substr(2));
      if (!v || *v < 0) return std::nullopt;
      state.remaining = *v;
      has_r = true;
    } else if (item.starts_with("t=")) {
      auto v = ParseInt(item.substr(2));
      if (!v || *v < 0) return std::nullopt;
      state.reset_seconds = *v;
      has_t = true;
    }
  }
  if (!has_r || !has_t) return std::nullopt;
  return state;
}

std::optional<RateLimitPolicy> ParseRateLimitPolicy(std::string_view header) {
  RateLimitPolicy policy;
  int quoted_seen = 0;
  bool has_q = false, has_w = false;
  for (std::string_view item : SplitItems(header)) {
    if (auto name = Unquote(item)) {
      // Either "fixed window";"api" or just "api".
      if (quoted_seen++ == 0) {
        policy.bucket = *name;
      } else {
        policy.kind = policy.bucket;
        policy.bucket = *name;
      }
    } else if (item.starts_with("q=")) {
      auto v = ParseInt(item.substr(2));
      if (!v || *v < 0) return std::nullopt;
      policy.quota = *v;
      has_q = true;
    } else if (item.starts_with("w=")) {
      auto v = ParseInt(item.substr(2));
      if (!v || *v <= 0) return std::nullopt;
      policy.window_seconds = *v;
      has_w = true;
    }
  }
  if (!has_q || !has_w) return std::nullopt;
  return policy;
}

std::optional<WallTime> ParseHttpDate(std::string_view text) {
  const std::string s(TrimWhitespace(text));
  char wday[16] = {}, month[4] = {}, zone[4] = {};
  int day = 0, year = 0, hour = 0, minute = 0, second = 0;
  std::tm tm{};
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  if (std::sscanf(s.c_str(), "%3s, %2d %3s %4d %2d:%2d:%2d %3s", wday, &day, month, &year, &hour,
                  &minute, &second, zone) == 8 &&
      std::strcmp(zone, "GMT") == 0) {
  } else if (std::sscanf(s.c_str(), "%15[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d %3s", wday, &day, month,
                         &year, &hour, &minute, &second, zone) == 8 &&
             std::strcmp(zone, "GMT") == 0) {
    // RFC 850: two-digit year; RFC 9110 says interpret >50 years ahead as the past.
    year += year < 70 ? 2000 : 1900;
  } else if (std::sscanf(s.c_str(), "%3s %3s %2d %2d:%2d:%2d %4d", wday, month, &day, &hour,
                         &minute, &second, &year) == 7) {
    // asctime: "Sun Nov  6 08:49:37 1994"
  } else {
    return std::nullopt;
  }
  const int mon = MonthIndex(month);
  if (mon < 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 || year < 1970 ||
      year > 9999) {
    return std::nullopt;
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = mon;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const time_t t = timegm(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  // WallTime counts nanoseconds in 64 bits: it ends in 2262. Later dates (the format allows
  // years up to 9999) would overflow from_time_t.
  if (t > kMaxWallSeconds) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view header, WallTime now) {
  header = TrimWhitespace(header);
  if (!header.empty() && header.find_first_not_of("0123456789") == std::string_view::npos) {
    auto v = ParseInt(header);
    if (!v) return std::nullopt;  // too many digits
    return std::chrono::seconds(std::min(*v, kMaxRetryAfterSeconds));
  }
  auto date = ParseHttpDate(header);
  if (!date) return std::nullopt;
  if (*date <= now) return std::chrono::seconds(0);
  return std::min(std::chrono::ceil<std::chrono::seconds>(*date - now),
                  std::chrono::seconds(kMaxRetryAfterSeconds));
}

}  // namespace hubwatch::hub
