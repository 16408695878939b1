#pragma once

// A derivative round's domain steps around the Hub's part (derivative_check.h): what the store
// knows before it (PrepareDerivativeRound), every derivative classified against upstream's
// fixes after it (ClassifyDerivativeRound), and the outcome written in one transaction
// (RecordDerivativeRound). daemon/schedule's DerivativeWatch only decides when a round runs and
// reports what it recorded.
//
// Classification: a derivative read at a new head gets one lag per fix (LagsOf); one whose read
// failed keeps its statuses and says why; an unchanged one (seen at the head already checked) is
// classified again from its stored facets, against every fix up to the newest, and is recorded
// only when a status changed (else it is a sighting: listed_at, signals and fixes_through). Facets
// stored unreadably keep their stored lags, which cover what they covered.
//
// Pure functions but Prepare and Record, which use the store connection they are given.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/derivatives/derivative.h"
#include "tracker/derivatives/lag.h"
#include "tracker/pipeline/derivative_check.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

// What a round of `upstream` starts from, read from the store before it.
struct PreparedDerivativeRound {
  DerivativeRoundInput input;
  // Upstream's fixes with their facets, loaded after `fixes_through` was read: a fix published
  // between the two reads is classified, never claimed.
  std::vector<derivatives::FixFacets> fixes;
  int64_t fixes_through = 0;  // the seq of upstream's newest fix at the start
  std::map<std::string, derivatives::DerivativeRecord> stored;  // by id
};

// How a round is run: what the repo's configuration and the watch's options say.
struct DerivativeRoundSettings {
  std::vector<derivatives::Relation> relations;
  size_t max = 200;
  int concurrency = 2;
  size_t follow_budget = 50;
};

Result<PreparedDerivativeRound> PrepareDerivativeRound(store::Store& reads,
                                                       const std::string& upstream,
                                                       const DerivativeRoundSettings& settings);

// A derivative that could not be read at its new head.
struct FailedDerivativeRead {
  std::string id;
  std::string head;
  std::string error;
};

// What a round found, classified: what to record and what to say of it.
struct ClassifiedDerivativeRound {
  std::vector<derivatives::DerivativeCheck> checks;  // read now, failed, or statuses changed
  std::vector<store::DerivativeSighting> sightings;  // unchanged statuses, seen again
  std::vector<derivatives::Eviction> evicted;
  std::vector<FailedDerivativeRead> failed;
  size_t lagging = 0;  // derivatives lagging on at least one fix after the round
  // "12 listed, 2 read at a new head (0 failed), ...; 9 requests"
  std::string summary;
};

// REQUIRES: every id in round.unchanged is in prepared.stored (the round was run on
// prepared.input).
ClassifiedDerivativeRound ClassifyDerivativeRound(const PreparedDerivativeRound& prepared,
                                                  DerivativeRound round, int64_t now);

// Records the checks, the sightings and the evictions in one transaction on `writer` (a lagging
// derivative's advisory goes to `targets`).
Status RecordDerivativeRound(store::Store& writer, const std::string& upstream,
                             const ClassifiedDerivativeRound& classified, int64_t now,
                             const store::DerivativeTargets& targets);

// "a/b (ranked_out: ranked 207th ...), c/d (not_found: ...) and 3 more": at most five named.
std::string EvictionsText(const std::vector<derivatives::Eviction>& evicted);

}  // namespace hubwatch::pipeline
