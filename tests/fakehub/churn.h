#pragma once

// Background churn: a pool of untracked repos ("churn-owner-XXX/bg-model-XXXXX") whose heads
// move on a fixed schedule, so the Hub-wide listing (sort=lastModified, no author) is as noisy
// as the real Hub's. Nothing is materialized per change: change k (k = 0, 1, ... counted from
// the Unix epoch) happens at k * 60 / per_minute seconds and moves background repo k mod repos;
// at time t a repo's head is its latest change at or before t, and its sha is a digest of
// (id, k). Only the listing shows these repos; every other endpoint answers them as a repo that
// does not exist (401 anonymous, 404 with a token), as the Hub does for unknown ids.
//
// Pure values and functions; safe from any thread.

#include <cstdint>
#include <string>
#include <vector>

namespace hubwatch::fakehub {

struct ChurnOptions {
  double per_minute = 0;  // changes per minute over the whole pool; 0 = no pool
  int repos = 5000;
  int owners = 500;
};

struct ChurnRepo {
  std::string id;           // churn-owner-XXX/bg-model-XXXXX
  std::string owner;        // churn-owner-XXX
  std::string internal_id;  // 24 hex
  int64_t created = 0;      // Unix seconds
};

// The pool, repo j at index j (owner j mod owners). Empty when per_minute <= 0.
std::vector<ChurnRepo> MakeChurnPool(const ChurnOptions& options);

// Repo j's latest change at or before `now` (Unix seconds): its global change index, or -1 when
// none (per_minute <= 0). A change shows in the listing in the second it falls in.
int64_t LatestChurnChange(const ChurnOptions& options, int j, int64_t now);
// The whole second change k falls in.
int64_t ChurnChangeTime(const ChurnOptions& options, int64_t change);
// The head sha after change k of repo `id`: 40 hex, deterministic.
std::string ChurnSha(const std::string& id, int64_t change);

}  // namespace hubwatch::fakehub
