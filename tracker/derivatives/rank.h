#pragma once

// Which derivatives of a repo are followed when more are found than `max`. The Hub's listing
// cannot tell a real fine-tune from a throwaway repo tagged base_model:... a minute ago, but the
// Hub's own counts can: derivatives rank by downloads (the last 30 days), then likes, then age
// (created earlier first), then those already followed before new ones, then id. Spam is new and
// has none of the three, so it takes only the places nothing else wants.
// Pure functions; thread-safe.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tracker/derivatives/derivative.h"

namespace hubwatch::derivatives {

struct Candidate {
  std::string id;
  Relation relation = Relation::kFinetune;
  Signals signals;
  bool known = false;  // stored by an earlier round
};

// The Hub's counts as a Signals: counts above INT64_MAX are clamped; a created_at that is not
// an RFC 3339 UTC time ("2024-04-18T05:41:09.000Z", at most 32 characters) is left unknown.
Signals SignalsOf(std::optional<uint64_t> downloads, std::optional<uint64_t> likes,
                  const std::optional<std::string>& created_at);

// True when `a` ranks before `b` (see above). An unknown created_at ranks as the oldest: a
// derivative stored before its date was recorded is not evicted on a guess.
bool RanksBefore(const Candidate& a, const Candidate& b);

struct Ranking {
  std::vector<Candidate> kept;   // at most `max`, best first
  std::vector<Candidate> below;  // the rest, best first
};
Ranking Rank(std::vector<Candidate> candidates, size_t max);

// One line saying why `out` ranked below the last kept, e.g. "ranked 207th of 1206 for 200
// places: 0 downloads, 0 likes, created 2026-05-01T10:00:00.000Z; the last kept has 12
// downloads, 3 likes, created 2024-04-18T05:41:09.000Z".
std::string RankedOutDetail(const Candidate& out, size_t position, size_t candidates, size_t max,
                            const Candidate& last_kept);

}  // namespace hubwatch::derivatives
