#pragma once

// Times as text, the one format hubwatch writes (RFC 3339 UTC, whole seconds) and the ones it
// reads. Pure functions; any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hubwatch::advisory {

// Seconds since the epoch -> "2026-12-02T13:12:35Z".
std::string Rfc3339(int64_t unix_seconds);

// "2024-04-18T16:22:32.000Z", "...T16:22:32+02:00" (RFC 3339, fraction ignored, 'T' or ' ') or
// non-negative Unix seconds -> Unix seconds; nullopt for anything else.
std::optional<int64_t> ParseTime(std::string_view text);

}  // namespace hubwatch::advisory
