#pragma once

// RepoStore: the tracked repositories (refs, source, polling state) and their ref cursors.
// Removing a repo removes everything recorded about it, its advisories through AdvisoryStore.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database and
// the AdvisoryStore, which must outlive it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/advisory_store.h"
#include "tracker/store/database.h"
#include "tracker/store/records.h"

namespace hubwatch::store {

class RepoStore {
 public:
  RepoStore(Database& db, AdvisoryStore& advisories) : db_(db), advisories_(advisories) {}

  // Inserts, or updates the refs, source and pins of one (tracking it again if it was
  // untracked); a repo the configuration or the API names is no longer a rule's.
  Status AddRepo(const RepoRecord& repo);
  Status RemoveRepo(const std::string& id);  // and everything recorded about it
  Result<std::optional<RepoRecord>> GetRepo(const std::string& id);
  // The id of a stored repo that is `id` but for ASCII letter case ("Qwen/X" for "qwen/x"): the
  // Hub matches ids without regard to case, so the two are one repo (index repos_by_id_nocase).
  Result<std::optional<std::string>> FindIdIgnoringCase(const std::string& id);
  Result<std::vector<RepoRecord>> ListRepos();  // untracked ones too (RepoRecord::tracked)
  Result<std::vector<RepoSchedule>> ListSchedules();  // every tracked repo, by id
  // What a poll found: state, detail, error count, last poll and reconcile, how the last change
  // was found, the Hub's counts; renamed_to when renamed. Not the next poll time: the scheduler
  // decides that (SetNextPoll).
  Status UpdateRepoPoll(const RepoRecord& repo);
  // The scheduler's decision of when `repo` is polled next (Unix seconds); what a restart reads.
  Status SetNextPoll(const std::string& repo, int64_t at);

  Result<std::optional<std::string>> GetRefHead(const std::string& repo, const std::string& ref);
  // Moves a ref cursor to a revision already ingested (a ref that caught up with another).
  Status SetRefHead(const std::string& repo, const std::string& ref, const std::string& sha,
                    int64_t now);

  // The change-hint listing's watermarks: source -> covered_until. The daemon keeps one, "hub",
  // whichever listings (the Hub-wide feed or per-owner pages) a round read.
  Result<std::map<std::string, int64_t>> ListingWatermarks();
  Status SetListingWatermark(const std::string& source, int64_t covered_until, int64_t now);

 private:
  Database& db_;
  AdvisoryStore& advisories_;
};

}  // namespace hubwatch::store
