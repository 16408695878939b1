#include "tracker/advisory/time_text.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace hubwatch::advisory {

std::string Rfc3339(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<int64_t> ParseTime(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && end == text.data() + text.size()) {
    return v >= 0 ? std::optional<int64_t>(v) : std::nullopt;
  }
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  int y, mo, d, h, mi, s, consumed = 0;
  const std::string t(text.substr(0, 64));
  if (std::sscanf(t.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s,
                  &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  size_t i = 19;
  if (i < t.size() && t[i] == '.') {
    while (++i < t.size() && t[i] >= '0' && t[i] <= '9') {
    }
  }
  int64_t offset = 0;
  if (i < t.size() && (t[i] == 'Z' || t[i] == 'z')) {
    ++i;
  } else if (i + 6 == t.size() && (t[i] == '+' || t[i] == '-') && t[i + 3] == ':') {
    const int oh = std::atoi(t.substr(i + 1, 2).c_str()),
              om = std::atoi(t.substr(i + 4, 2).c_str());
    offset = (t[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != t.size() || t.size() != text.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
      mi > 59 || s > 60) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

}  // namespace hubwatch::advisory
