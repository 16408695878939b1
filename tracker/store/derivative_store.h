#pragma once

// DerivativeStore: the derivatives of tracked repos (fine-tunes, adapters, quantizations,
// merges), their last check and where each stands on every behavioral fix upstream published
// (tables derivatives and derivative_lags). Recording a check settles the advisory of each lag
// through DerivativeAdvisories (published when the derivative first lags a fix, rewritten when
// it catches up or lags again). A derivative whose lags predate upstream's newest fix
// (DerivativeCheck::fixes_through) reads back as not current and is counted as unchecked: its
// old statuses never count as fixed. evictions() keeps what rounds dropped.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database and
// the AdvisoryStore, which must outlive it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/derivatives/derivative.h"
#include "tracker/diff/change.h"
#include "tracker/store/advisory_store.h"
#include "tracker/store/database.h"
#include "tracker/store/derivative_advisories.h"
#include "tracker/store/derivative_evictions.h"

namespace hubwatch::store {

// Derivatives of one upstream by where they stand: each counts once. One not current (never
// read, or its lags predate upstream's newest fix) is unchecked; a current one is lagging when
// any of its lags is, else diverged when any is, else fixed when any is, else not_applicable
// (also when it has no lags: nothing to check against).
struct DerivativeTally {
  int64_t derivatives = 0;
  int64_t checked = 0;  // current: lagging + fixed + diverged + not_applicable
  int64_t lagging = 0;
  int64_t fixed = 0;
  int64_t diverged = 0;
  int64_t not_applicable = 0;
  int64_t unchecked = 0;  // derivatives - checked
};

// A stored derivative a round saw at its stored head (MarkListed).
struct DerivativeSighting {
  std::string id;
  std::optional<derivatives::Signals> signals{};  // nullopt: the stored ones stay
  // Its stored facets were classified against every fix up to this seq with the statuses it
  // has (DerivativeCheck::fixes_through); nullopt: not classified, the stored value stays.
  std::optional<int64_t> fixes_through{};
};

class DerivativeStore {
 public:
  DerivativeStore(Database& db, AdvisoryStore& advisories)
      : db_(db), advisories_(db, advisories), evictions_(db) {}

  DerivativeEvictions& evictions() { return evictions_; }

  // The published advisories of `upstream` a derivative is checked against: not withdrawn (held
  // ones are not published yet), of a change of kind config, generation_config, tokenizer,
  // chat_template or special_tokens with impact behavioral or breaking; oldest (seq) first.
  // parent_sha: the first parent of the advisory's revision when that revision is stored, "".
  Result<std::vector<derivatives::UpstreamFix>> UpstreamFixes(const std::string& upstream);
  // The seq of the newest of those fixes; 0 when there is none.
  Result<int64_t> NewestFixSeq(const std::string& upstream);

  // Records one check, in one transaction. The row is upserted (listed_at = now). Without an
  // error its lags become check.lags (and fixes_through check.fixes_through); with one only the
  // error, checked_at, relation, last_modified and listed_at change: the head, facets and
  // fixes_through stay those the kept lags were read at ("" and 0 for a new row). Signals are
  // set when check.signals is. Every lag must name an advisory of check.upstream (else
  // InvalidInput, nothing written). Each lag settles the derivative's advisory for its fix
  // (DerivativeAdvisories::Settle, with `targets`) and its row keeps that advisory's id
  // (check.lags' derivative_advisory_id is ignored). REQUIRES: check.upstream is tracked.
  Status RecordCheck(const derivatives::DerivativeCheck& check, int64_t now,
                     const DerivativeTargets& targets = {});
  // Sets listed_at = now (and the signals and fixes_through each gives) for those of `seen` that
  // are stored (a listing or their own request showed them with an unmoved head); others are
  // left out.
  Status MarkListed(const std::string& upstream, const std::vector<DerivativeSighting>& seen,
                    int64_t now);
  // Removes a derivative no longer listed and its lags; its advisories stay published.
  Status Forget(const std::string& upstream, const std::string& id);

  // `upstream`'s derivatives by id, each with its lags (by upstream advisory id), signals and
  // whether it is current (DerivativeRecord::current).
  Result<std::vector<derivatives::DerivativeRecord>> List(const std::string& upstream);
  Result<std::optional<derivatives::DerivativeRecord>> Get(const std::string& upstream,
                                                           const std::string& id);
  // Upstream advisory id -> how many derivatives of `upstream` stand where on it (only the
  // advisories with at least one lag); a lag of a derivative that is not current counts as
  // unchecked, whatever it said.
  Result<std::map<std::string, derivatives::LagCounts>> CountsByAdvisory(
      const std::string& upstream);
  Result<DerivativeTally> Tally(const std::string& upstream);

 private:
  Status UpsertRow(const derivatives::DerivativeCheck& check, int64_t now);
  Result<std::vector<derivatives::AdvisoryLag>> LagsOf(const std::string& upstream,
                                                       const std::string& id);

  Database& db_;
  DerivativeAdvisories advisories_;
  DerivativeEvictions evictions_;
};

}  // namespace hubwatch::store
