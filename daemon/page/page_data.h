#pragma once

// What the model page shows, read from the store: the repo, its revisions with their changes
// (newest first), and the estimate of the revision shown, recomputed from that revision's
// stored config.json and safetensors headers (the estimator is a pure function of them and of
// the code, so the page needs no stored copy). Runs on whichever thread owns `store`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/estimate.h"
#include "tracker/store/records.h"
#include "tracker/store/store.h"

namespace hubwatch::page {

struct RevisionHistory {
  store::RevisionRecord revision;
  std::vector<store::ChangeRecord> changes;  // in ordinal order
};

// The repo's revisions, newest first, each with its changes. At most `limit` revisions.
Result<std::vector<RevisionHistory>> LoadHistory(store::Store& store, const std::string& repo,
                                                 int64_t limit);

struct RevisionEstimate {
  std::optional<Estimate> estimate;  // unset: `unavailable` says why
  std::string unavailable;
  std::vector<std::string> shard_files;  // the checkpoint's safetensors files, by path
};

// What every estimate of one revision shares, whatever the workload: the estimator's basis
// (pipeline::BasisOf over the stored config.json and headers), or why there is none, and the
// checkpoint's files. Immutable once prepared; shared between threads through BasisCache.
struct RevisionBasis {
  std::optional<EstimateBasis> basis;  // unset: `unavailable` says why
  std::string unavailable;
  std::vector<std::string> shard_files;
  size_t ApproxBytes() const;
};

// The basis of `repo`@`sha` for input.build, from the store: the costly part of an estimate
// (every stored safetensors header of the revision is read and parsed; StoredHeaderBytes says
// how much that is before doing it). A revision the estimator cannot estimate (no config.json
// and no headers, a refused config and no headers) is a value with the reason, not an error;
// errors are the store's.
Result<RevisionBasis> PrepareRevision(store::Store& store, const std::string& repo,
                                      const std::string& sha, const EstimateInput& input = {});
// The estimate for `input`'s workload, assumptions and cards: arithmetic over the basis.
RevisionEstimate FinishRevision(const RevisionBasis& basis, const EstimateInput& input = {});
// PrepareRevision, then FinishRevision: the estimate of `repo`@`sha` for `input` (default: the
// default workload and the hubwatch preset).
Result<RevisionEstimate> EstimateRevision(store::Store& store, const std::string& repo,
                                          const std::string& sha, const EstimateInput& input = {});
// The bytes of safetensors headers the store holds for `repo`@`sha`'s checkpoint: what
// PrepareRevision would read and parse. Stops at the first shard that takes the sum past
// `stop_after` (each length read costs a read of that header's row, not a parse), so asking
// costs at most one header more than the budget asked about.
Result<uint64_t> StoredHeaderBytes(store::Store& store, const std::string& repo,
                                   const std::string& sha, uint64_t stop_after = UINT64_MAX);

}  // namespace hubwatch::page
