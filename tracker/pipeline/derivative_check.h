#pragma once

// DerivativeCheck: one round over a tracked repo's derivatives, from the Hub.
//
//   1. The listing, once per relation: GET /api/models?filter=base_model:{relation}:{upstream}
//      &sort=downloads&expand=sha&expand=lastModified&expand=createdAt&expand=downloads
//      &expand=likes&expand=siblings, most downloaded first, at most `max` per relation.
//   2. The candidates - those listed and every derivative stored before - are ranked by what
//      spam lacks (derivatives/rank.h: downloads, likes, age) and the best `max` are followed.
//      A stored one ranked below them is evicted; so is one a complete listing no longer shows.
//      Throwaway repos newer than the real derivatives cannot push those out of the round.
//   3. A followed derivative the listing did not show (its downloads tie with spam's, or the
//      listing is crowded) is followed by its own request, GET /api/models/{id} with the same
//      expands and tags, the least recently seen first, at most `follow_budget` a round (the
//      others keep their statuses, unchecked once upstream fixes something newer). 404: evicted
//      (not found); no longer tagged as a derivative of upstream: evicted (untagged).
//   4. A derivative seen at the head its last check read costs nothing more: the sha is the
//      validator. One at a new head is read at that commit (derivative_read.h: its facet files,
//      else a GGUF's metadata, else nothing).
//      `concurrency` requests (follow-ups, then reads) at once, so a round never takes over the
//      client.
//
// What the round found is a value; derivative_round.h classifies and records it. Thread safety:
// the client's loop thread. REQUIRES: the client outlives the check.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tracker/derivatives/derivative.h"
#include "tracker/derivatives/facets.h"
#include "tracker/derivatives/lag.h"
#include "tracker/derivatives/rank.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/derivative_read.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

// A derivative stored by an earlier round.
struct KnownDerivative {
  derivatives::Relation relation = derivatives::Relation::kFinetune;
  derivatives::Signals signals;  // as last seen
  std::string last_modified;
  int64_t seen_at = 0;  // the last listing or request that showed it (listed_at)
};

struct DerivativeRoundInput {
  std::string upstream;
  std::vector<derivatives::Relation> relations;
  size_t max = 200;  // derivatives followed, over all relations (>= 1)
  // Derivative id -> the head its stored check read: not read again while seen there.
  std::map<std::string, std::string> checked_heads;
  // Every stored derivative: ranked with the listed ones, followed by its own request when
  // kept but not listed.
  std::map<std::string, KnownDerivative> known;
  size_t follow_budget = 50;  // own requests a round may send for those
  int concurrency = 2;
};

struct DerivativeRound {
  std::optional<hub::HubError> listing_error;  // then nothing else is set
  // Followed derivatives at a new head (or whose follow-up failed: `error` says why), by id.
  std::vector<DerivativeRead> reads;
  std::vector<std::string> unchanged;  // followed, seen at the head already checked
  // What the listing or a follow-up said of each followed derivative seen now.
  std::map<std::string, derivatives::Signals> seen;
  std::vector<derivatives::Eviction> evicted;  // stored ones no longer followed (evicted_at: 0)
  std::vector<std::string> listed;             // every derivative listed, by id
  bool complete = false;    // every relation's listing was read to its end (under `max`)
  size_t not_admitted = 0;  // listed, never stored, ranked below the `max` followed
  size_t followed = 0;      // follow-ups sent (stored, kept, not listed)
  size_t deferred = 0;      // kept, not listed, past the follow budget: as stored
  int requests = 0;         // HTTP requests the round sent (pages, hops, retries)
};

void CheckDerivatives(hub::HubClient& hub, DerivativeRoundInput input,
                      std::function<void(DerivativeRound)> done);

// The fixes of `upstream` a derivative is checked against, with what each changed: upstream's
// facets at the fixing revision and at its parent, from the stored files. Fixes that changed
// nothing a check can see, or whose parent is not stored, are left out.
Result<std::vector<derivatives::FixFacets>> LoadFixFacets(store::Store& store,
                                                          const std::string& upstream);

// One lag per fix.
std::vector<derivatives::AdvisoryLag> LagsOf(const std::vector<derivatives::FixFacets>& fixes,
                                             const derivatives::FacetSet& facets);

}  // namespace hubwatch::pipeline
