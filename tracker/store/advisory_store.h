#pragma once

// AdvisoryStore: the advisories feed (seq order), the advisories a revision's Ingest records
// (published at once with their outbox rows, or held while the repo's burst settles), and the
// publication of settled bursts.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database, which
// must outlive it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/database.h"
#include "tracker/store/records.h"

namespace hubwatch::store {

// osv.dev query semantics over one repo, withdrawn advisories left out, seq ascending:
// commit "" = every advisory of the repo; otherwise those whose GIT range holds the commit,
// in ingest order: introduced <= commit < fixed ("0" or an unknown introduced = the start).
// An unknown commit matches nothing.
struct AffectingQuery {
  std::string repo;
  std::string commit;
  int64_t after_seq = 0;  // paging: only seq > after_seq
  int64_t limit = 0;      // 0: no limit
};

struct Publication {
  int64_t published = 0;                  // advisories published by this call
  std::optional<int64_t> next_settle_at;  // when what is still held for the repo settles
};

struct HeldBurst {
  std::string repo;
  int64_t settle_at = 0;
  int64_t advisories = 0;
};

class AdvisoryStore {
 public:
  explicit AdvisoryStore(Database& db) : db_(db) {}

  Result<std::vector<AdvisoryRecord>> ListAdvisories(const Query& query);  // seq ascending
  Result<std::optional<AdvisoryRecord>> GetAdvisory(const std::string& id);
  // The highest advisory seq so far (0: none).
  Result<int64_t> MaxAdvisorySeq();
  // Advisories newest first (seq descending); query.repo, kind and limit apply.
  Result<std::vector<AdvisoryRecord>> RecentAdvisories(const Query& query);
  Result<std::vector<AdvisoryRecord>> AdvisoriesAffecting(const AffectingQuery& query);
  // How many advisories AdvisoriesAffecting({repo, commit}) would list.
  Result<int64_t> CountAffecting(const std::string& repo, const std::string& commit);

  // Ingest's advisories of `in`, for the changes inserted as `change_ids` (by ordinal):
  // published at once (the next seq, one outbox row per target), or held when in.settle_at is
  // set, which also moves the settle time of everything held for the repo to at least settle_at:
  // a burst settles as one. REQUIRES: inside a transaction (RevisionStore::Ingest's).
  Status RecordAdvisories(const RevisionIngest& in, const std::vector<int64_t>& change_ids);
  // Deletes the advisories and held advisories of `repo`. REQUIRES: inside a transaction.
  Status ForgetRepo(const std::string& repo);

  // Publishes `repo`'s held advisories if its burst has settled (settle_at <= now), in ingest
  // order, in one transaction: each gets the next seq, published = modified = `now` in its row
  // and OSV record (database_specific.ingested_at keeps the ingest time) and its outbox rows.
  Result<Publication> PublishSettled(const std::string& repo, int64_t now);
  // Whether the repo has advisories held (a burst not yet published).
  Result<bool> HasHeldAdvisories(const std::string& repo);
  // Every repo with held advisories, by settle time.
  Result<std::vector<HeldBurst>> HeldBursts();

  // One published advisory: its row (the next seq), then one outbox row per target.
  struct PublishedRow {
    const std::string& id;
    const std::string& repo;
    const std::string& sha;
    int64_t change_id;
    const std::string& kind;
    const std::string& osv;  // the record as text
    const std::string& published;
    const std::string& modified;
    int64_t ingested_at;
    const std::vector<std::string>& targets;
    int64_t queued_at;  // the outbox rows' created_at
  };
  // Publishes one advisory now (DerivativeStore's too, so that every advisory is published
  // alike). REQUIRES: inside a transaction.
  Status InsertPublished(const PublishedRow& row);

 private:
  // The advisories whose ids `ids` holds, in its order.
  Result<std::vector<AdvisoryRecord>> ReadAll(Result<std::vector<std::string>> ids);

  Database& db_;
};

}  // namespace hubwatch::store
