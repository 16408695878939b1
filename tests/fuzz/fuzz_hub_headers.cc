// libFuzzer target: the Hub response headers hubwatch parses (tracker/hub/link_header.h,
// rate_limit.h). The first byte picks the rel FindLinkTarget looks for; the rest is the header
// value, given to every parser. Invariants: a Link target is a substring of the header between
// '<' and '>' and needs a rel parameter; RateLimit counts are non-negative and a policy's window
// positive; Retry-After is never negative and small enough to add to the current time (a date
// past 2262 once overflowed WallTime: tests/fuzz/corpus/hub_headers/crash-*).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "tracker/hub/link_header.h"
#include "tracker/hub/rate_limit.h"

namespace {
hubwatch::WallTime WallTimeMax() { return hubwatch::WallTime::max(); }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static constexpr std::string_view kRels[] = {"next", "prev", "last", "first", "NEXT", ""};
  const std::string_view rel = kRels[data[0] % std::size(kRels)];
  const std::string_view header(reinterpret_cast<const char*>(data + 1), size - 1);

  if (std::optional<std::string> target = hubwatch::hub::FindLinkTarget(header, rel)) {
    FUZZ_CHECK(header.find("<" + *target + ">") != std::string_view::npos,
               "link target is not between <> in the header");
    FUZZ_CHECK(target->find('>') == std::string::npos, "link target holds '>'");
    std::string lower(header);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    FUZZ_CHECK(lower.find("rel") != std::string::npos, "link found without a rel parameter");
  }

  if (auto state = hubwatch::hub::ParseRateLimit(header)) {
    FUZZ_CHECK(state->remaining >= 0 && state->reset_seconds >= 0, "negative RateLimit");
  }
  if (auto policy = hubwatch::hub::ParseRateLimitPolicy(header)) {
    FUZZ_CHECK(policy->quota >= 0 && policy->window_seconds > 0, "bad RateLimit-Policy");
  }

  const hubwatch::WallTime now =
      std::chrono::system_clock::from_time_t(1733145155);  // 2024-12-02T13:12:35Z
  if (auto wait = hubwatch::hub::ParseRetryAfter(header, now)) {
    FUZZ_CHECK(wait->count() >= 0, "negative Retry-After");
    // Callers add it to the current WallTime (nanoseconds) and convert it to milliseconds.
    const int64_t max_seconds =
        std::chrono::duration_cast<std::chrono::seconds>(WallTimeMax() - now).count();
    FUZZ_CHECK(wait->count() < max_seconds, "Retry-After overflows now + wait");
    (void)(now + *wait);
  }
  if (auto date = hubwatch::hub::ParseHttpDate(header)) {
    (void)std::chrono::system_clock::to_time_t(*date);
  }
  return 0;
}
