#pragma once

// Pins: the revisions a repo's users run (RepoRecord::pins, from the configuration or the admin
// API), each with the advisories that affect it - the changes made after it to a state it has,
// osv.dev's "affected" - and the newest revision, the one that takes every fix.
//
// Thread safety: as the Store it reads.

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/records.h"
#include "tracker/store/store.h"

namespace hubwatch::store {

struct PinStatus {
  std::string pin;           // as configured
  std::string sha;           // the revision it names; "" when the store has none (yet)
  std::string problem;       // why `sha` is "" (not ingested yet, ambiguous); "" otherwise
  int64_t advisories = 0;    // published, not withdrawn, affecting it
  std::string newest;        // the newest revision not rewritten away; "" when none
  bool current() const { return !sha.empty() && sha == newest; }
};

// One status per pin of `repo`, in its order.
Result<std::vector<PinStatus>> PinStatuses(Store& store, const RepoRecord& repo);

}  // namespace hubwatch::store
