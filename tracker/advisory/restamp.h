#pragma once

// Restamp: the OSV record of an advisory published later than its revision was ingested (a
// settled burst) gets the publication time. Pure function; thread-safe.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

namespace hubwatch::advisory {

// `osv` with "published" and "modified" set to Rfc3339(published_at) and
// "database_specific"."ingested_at" to Rfc3339(ingested_at), everything else kept. nullopt when
// `osv` is not an object or holds a "database_specific" that is not an object.
std::optional<nlohmann::json> Restamp(nlohmann::json osv, int64_t published_at,
                                      int64_t ingested_at);

}  // namespace hubwatch::advisory
