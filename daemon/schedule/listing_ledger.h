#pragma once

// ListingLedger: what the Hub's model listing has told us, and what the next read should be.
// Pure bookkeeping (no I/O), so every rule of the listing hint is testable without a Hub.
//
// The listing (GET /api/models?sort=lastModified) is newest first by the time of each repo's
// last commit on its default branch, in whole seconds. A round reads either each owner's
// listing (author=OWNER, one request per owner of a tracked repo when little changed) or the
// Hub-wide feed (one request per page_size changes on the whole Hub), whichever is expected to
// cost fewer requests; the feed's rate is measured from what the feed shows (a first page of it,
// its "probe", when nothing else is known, and again every kProbeEvery rounds in owner mode).
//
// Both are read down to the watermark: the newest lastModified seen by the previous rounds, less
// an overlap against a listing that lags. Items are deduplicated by sha: a tracked repo is a
// candidate only when its listed sha is new to the ledger; the caller then compares it with the
// stored head and hints the repo when they differ. With no watermark yet (a first start), a
// round reads one page of each source and sets it.
//
// Memory: the tracked ids are interned (RepoIds) and each one's last listed sha is kept as a
// 64-bit digest, about 60 bytes a repo (issue 33: 100,000 repos). Two shas with one digest
// (odds 2^-64 a change) would hide a change from the listing; the reconcile still finds it.
//
// Thread safety: none (the service uses it on its network thread).

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "daemon/schedule/repo_ids.h"

namespace hubwatch::schedule {

struct ListedModel {
  std::string id;
  std::string sha;
  int64_t last_modified = 0;  // Unix seconds
};

enum class ListingMode { kOwners, kFeed };
std::string_view ListingModeName(ListingMode mode);  // "owners", "feed"

struct ListingRound {
  ListingMode mode = ListingMode::kOwners;
  // The listings to read: "" is the Hub-wide feed, anything else an owner.
  std::vector<std::string> sources;
  // The expected requests of each mode this round (what the choice was made on).
  int64_t owners_cost = 0;
  int64_t feed_cost = 0;
};

class ListingLedger {
 public:
  struct Options {
    int page_size = 1000;
    int64_t overlap_s = 120;
    // In owner mode the feed's first page is read every this many rounds, to keep its rate
    // current (a first round reads it too).
    int probe_every = 10;
  };
  explicit ListingLedger(Options options) : options_(options) {}

  // The tracked repos (ids "owner/name") a listing may speak for.
  void SetTracked(const std::vector<std::string>& repos);
  // The owners whose listings are read as well (those of follow rules), replacing the last
  // ones. After SetTracked: an owner of a tracked repo is not counted twice.
  void SetFollowedOwners(const std::vector<std::string>& owners);
  size_t owners() const;

  // Restores the watermark a previous run reached (Unix seconds).
  void RestoreWatermark(int64_t covered_until) { watermark_ = covered_until; }
  std::optional<int64_t> watermark() const { return watermark_; }
  // Changes per second on the whole Hub as last measured; nullopt until the feed was read.
  std::optional<double> feed_rate() const { return feed_rate_; }

  // What the next round reads, for a round every `interval_s`.
  ListingRound Plan(int64_t interval_s);

  // Whether `last_modified` is the last item a read wants: at or below the watermark less the
  // overlap. Always true without a watermark (one page).
  bool LastWanted(int64_t last_modified) const;

  // One source's read (in listing order). Returns the tracked repos whose listed sha is new.
  std::vector<ListedModel> Consume(const std::string& source,
                                   const std::vector<ListedModel>& items);

  // The round ended: every source was read when `complete`; the watermark moves to
  // the newest lastModified seen only then (an incomplete round is read again from the old one).
  void EndRound(bool complete);

 private:
  Options options_;
  static uint64_t ShaDigest(const std::string& sha);

  RepoIds tracked_;
  std::vector<uint64_t> shas_;         // by tracked_ index: the last sha listed's digest; 0: none
  std::map<std::string, int> owners_;  // owner -> tracked repos
  std::set<std::string> followed_owners_;  // follow rules' owners that own no tracked repo
  std::optional<int64_t> watermark_;
  int64_t newest_seen_ = 0;  // this round
  std::optional<double> feed_rate_;
  int rounds_since_probe_ = 0;
};

}  // namespace hubwatch::schedule
