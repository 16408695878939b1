#pragma once

// DerivativeAdvisories: the advisory a derivative gets for an upstream fix it lags (table
// advisories, with repo = the derivative, sha = its head and change_id = the upstream change).
// Published through AdvisoryStore::InsertPublished like any other (the next seq, outbox rows)
// the first time a lag on that fix says lagging; afterwards rewritten in place (its OSV
// record's status and fixed event, and modified), never republished, when the lag stops or
// starts lagging again. DerivativeStore::RecordCheck settles one per lag it records.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database and
// the AdvisoryStore, which must outlive it.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/derivatives/derivative.h"
#include "tracker/diff/change.h"
#include "tracker/store/advisory_store.h"
#include "tracker/store/database.h"

namespace hubwatch::store {

// The delivery targets of a derivative's new advisory (as PollerOptions::outbox_targets, called
// with the derivative id and the upstream change).
using DerivativeTargets =
    std::function<std::vector<std::string>(const std::string& derivative, const diff::Change&)>;

class DerivativeAdvisories {
 public:
  DerivativeAdvisories(Database& db, AdvisoryStore& advisories)
      : db_(db), advisories_(advisories) {}

  // The advisory of `check`'s derivative on `fix` (whose upstream change is `change`), as
  // `lag` says it stands. A lag that is lagging publishes it when there is none yet (id:
  // advisory::DerivativeAdvisoryId), with `targets`' outbox rows; one whose advisory last said
  // lagging and that no longer lags rewrites that advisory's record (status, fixed =
  // check.head) and modified, once; lagging again rewrites it back. Otherwise it is left as it
  // is. Returns its id; "" when there is none (it never lagged). An Io error when the stored
  // record is damaged. REQUIRES: inside a transaction; `fix` is an advisory of check.upstream.
  Result<std::string> Settle(const derivatives::DerivativeCheck& check,
                             const derivatives::AdvisoryLag& lag,
                             const derivatives::UpstreamFix& fix, const diff::Change& change,
                             int64_t now, const DerivativeTargets& targets);

 private:
  Database& db_;
  AdvisoryStore& advisories_;
};

}  // namespace hubwatch::store
