#pragma once

// DerivativeEvictions: the derivatives that derivative rounds stopped following, and why
// (table derivative_evictions): ranked below the `max` followed, no longer in a complete
// listing, no longer served by the Hub, no longer tagged as a derivative. Evicting forgets the
// derivative (its row and lags; its advisories stay published) and records it; the newest
// kKept per upstream are kept, for the API and `hubwatch derivatives`.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database.

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/derivatives/derivative.h"
#include "tracker/store/database.h"

namespace hubwatch::store {

class DerivativeEvictions {
 public:
  static constexpr int64_t kKept = 100;

  explicit DerivativeEvictions(Database& db) : db_(db) {}

  // Forgets each of `evicted` and records it with evicted_at = now, in one transaction; then
  // keeps only the newest kKept records of `upstream`. REQUIRES: `upstream` is tracked.
  Status Evict(const std::string& upstream, const std::vector<derivatives::Eviction>& evicted,
               int64_t now);
  // The newest `limit` records of `upstream`, newest first.
  Result<std::vector<derivatives::Eviction>> Recent(const std::string& upstream, int64_t limit);

 private:
  Database& db_;
};

}  // namespace hubwatch::store
