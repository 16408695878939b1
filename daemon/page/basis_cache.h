#pragma once

// BasisCache: the estimate bases of revisions the pages and the estimate routes showed, keyed
// repo@sha (BasisKey), bounded by what they weigh (RevisionBasis::ApproxBytes). A revision's
// basis is a pure function of its stored files and of the code, so an entry never goes stale;
// preparing it (every shard's safetensors header from the store, parsed, and the graph built)
// is most of what a cold page or a re-estimate costs, and finishing it for a workload is
// arithmetic.

#include <cstddef>
#include <memory>
#include <string>

#include "daemon/page/lru_cache.h"
#include "daemon/page/page_data.h"

namespace hubwatch::page {

using BasisCache = LruCache<RevisionBasis>;

inline std::shared_ptr<BasisCache> MakeBasisCache(size_t max_bytes) {
  return std::make_shared<BasisCache>(max_bytes,
                                      [](const RevisionBasis& b) { return b.ApproxBytes(); });
}

inline std::string BasisKey(const std::string& repo, const std::string& sha) {
  return repo + "@" + sha;
}

}  // namespace hubwatch::page
