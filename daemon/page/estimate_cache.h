#pragma once

// EstimateCache: the estimates model pages show, keyed repo@sha (EstimateKey). A revision's
// estimate is a pure function of its stored files and of the code, so an entry never goes
// stale; recomputing it (the estimator plus every shard's safetensors header from the store)
// is most of what a cold page costs.

#include <string>

#include "daemon/page/lru_cache.h"
#include "daemon/page/page_data.h"

namespace hubwatch::page {

using EstimateCache = LruCache<RevisionEstimate>;

inline std::string EstimateKey(const std::string& repo, const std::string& sha) {
  return repo + "@" + sha;
}

}  // namespace hubwatch::page
