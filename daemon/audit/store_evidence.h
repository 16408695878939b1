#pragma once

// StoreEvidence: what a hubwatch store knows of the repos and revisions audit asks about (the
// store a configuration names: `hubwatch audit --config FILE`). Pinned revisions are resolved
// as `hubwatch changes --since` resolves one (a unique sha prefix or a tracked ref) and judged
// by osv.dev's "affected" (tracker/store/advisory_store.h's AffectingQuery); floating ones by
// the advisories of revisions committed since the time asked; an untracked repo is looked up
// among the tracked repos' derivatives.
//
// Thread safety: as the Store it borrows (one thread at a time). Ownership: borrows `store`,
// which must outlive it.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/audit/judgement.h"
#include "tracker/derivatives/derivative.h"
#include "tracker/store/store.h"

namespace hubwatch::audit {

class StoreEvidence final : public EvidenceSource {
 public:
  explicit StoreEvidence(store::Store& store) : store_(store) {}

  // `since`: a time (RFC 3339, YYYY-MM-DD or Unix seconds) or "" for none. Errors: a store
  // failure, or a `since` that is not a time (InvalidInput).
  Result<std::vector<Evidence>> Gather(const std::vector<EvidenceRequest>& requests,
                                       const std::string& since) override;

 private:
  Result<Evidence> GatherOne(const EvidenceRequest& request, const std::string& since);
  // The derivative record of `repo` among the tracked repos' derivatives, if any; read once.
  Result<const derivatives::DerivativeRecord*> DerivativeOf(const std::string& repo);
  Result<AuditAdvisory> AdvisoryById(const std::string& id);

  store::Store& store_;
  bool derivatives_read_ = false;
  std::map<std::string, derivatives::DerivativeRecord> derivatives_;  // by derivative id
};

// An advisory record as audit reports it: impact from its OSV database_specific.
AuditAdvisory AuditAdvisoryOf(const store::AdvisoryRecord& record);

}  // namespace hubwatch::audit
