#include "tests/fakehub/churn.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tests/fakehub/hashing.h"

namespace hubwatch::fakehub {
namespace {

// Changes per minute as a ratio of integers (millichanges), so the schedule is exact.
int64_t RateMilli(const ChurnOptions& options) {
  return static_cast<int64_t>(std::llround(options.per_minute * 1000));
}

}  // namespace

std::vector<ChurnRepo> MakeChurnPool(const ChurnOptions& options) {
  std::vector<ChurnRepo> pool;
  if (RateMilli(options) <= 0 || options.repos <= 0) return pool;
  const int owners = std::max(1, options.owners);
  pool.reserve(static_cast<size_t>(options.repos));
  for (int j = 0; j < options.repos; ++j) {
    char owner[32], id[64];
    std::snprintf(owner, sizeof owner, "churn-owner-%03d", j % owners);
    std::snprintf(id, sizeof id, "%s/bg-model-%05d", owner, j);
    ChurnRepo repo;
    repo.id = id;
    repo.owner = owner;
    repo.internal_id = Sha1Hex(std::string("churn repo ") + id).substr(0, 24);
    repo.created = 1704067200 + int64_t{j} * 60;  // 2024-01-01, a minute apart
    pool.push_back(std::move(repo));
  }
  return pool;
}

// Change k falls at k * 60 / rate seconds, rate = milli / 1000 per minute, i.e. at
// k * 60000 / milli. It is visible at t when that is < t + 1, i.e. k * 60000 < (t + 1) * milli.
int64_t LatestChurnChange(const ChurnOptions& options, int j, int64_t now) {
  const int64_t milli = RateMilli(options);
  if (milli <= 0 || options.repos <= 0 || now < 0) return -1;
  const int64_t bound = (now + 1) * milli;  // k * 60000 < bound
  const int64_t last = (bound + 59999) / 60000 - 1;
  const int64_t n = options.repos;
  if (last < j) return -1;
  return last - ((last - j) % n);
}

int64_t ChurnChangeTime(const ChurnOptions& options, int64_t change) {
  const int64_t milli = RateMilli(options);
  if (milli <= 0) return 0;
  return change * 60000 / milli;
}

std::string ChurnSha(const std::string& id, int64_t change) {
  return Sha1Hex("churn commit\n" + id + "\n" + std::to_string(change));
}

}  // namespace hubwatch::fakehub
