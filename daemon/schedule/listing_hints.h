#pragma once

// ListingHints: every interval, reads the Hub's model listing (ListingLedger says which
// listings and how far) and hints the tracked repos whose listed sha differs from the stored
// head of their default branch, so that only those are polled; every item read is also handed
// to the follow rules (Deps::listed), which track the new repos they match. One round at a time; a round's
// sources are read a few at once; its requests count against the scheduler's budget. A failed
// round keeps the old watermark (the next one reads from there) and is logged and counted.
//
// Metrics: hubwatch_listing_rounds_total{outcome}, hubwatch_listing_requests_total{mode},
// hubwatch_listing_mode{mode} (1 for the mode of the last round), hubwatch_listing_feed_rate
// (Hub-wide changes per second as measured), hubwatch_hints_received_total{source="listing"}.
//
// Rounds are timed by the TimerClock in Deps; its timer never fires after Stop() or destruction.
//
// Thread safety: network thread only (the hub client's loop, where the clock's timers run);
// destroy it there or after the loop has stopped. Ownership: borrows the clock, logger, metrics
// and hub client, which must outlive it; Stop() before they go.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/schedule/listing_ledger.h"
#include "estimator/base/clock.h"
#include "tracker/hub/client.h"

namespace spdlog {
class logger;
}

namespace hubwatch::service {
class Metrics;
}

namespace hubwatch::schedule {

class ListingHints {
 public:
  struct Options {
    int64_t interval_s = 900;
    int page_size = 1000;
    int parallel = 4;    // listings read at once
    int max_pages = 50;  // per listing and round; more is a gap the reconcile covers
    bool hint = true;    // false: the rounds only feed `listed` (change hints are off)
  };
  struct Deps {
    TimerClock* clock = nullptr;  // time, and the timer between rounds
    std::shared_ptr<spdlog::logger> log;
    service::Metrics* metrics = nullptr;
    hub::HubClient* hub = nullptr;
    // The tracked repos now.
    std::function<std::vector<std::string>()> tracked;
    // The stored head of `repo`'s default branch ("main"); nullopt when none is stored (a repo
    // never polled, or one that does not track main: neither is hinted).
    std::function<std::optional<std::string>(const std::string& repo)> stored_head;
    // A listing shows that `repo` moved to `sha`: poll it.
    std::function<void(const std::string& repo, const std::string& sha)> hint;
    // Requests a round made, for the scheduler's budget.
    std::function<void(int64_t requests)> spend;
    // Persists the watermark a round reached.
    std::function<void(int64_t covered_until)> save_watermark;
    // Follow rules (unset: none): the owners whose listings a round reads besides the tracked
    // repos' owners; whether the items must show their filters and counts (more expand=); and
    // every item each read returns, tracked or not.
    std::function<std::vector<std::string>()> followed_owners;
    std::function<bool()> follow_details;
    std::function<void(const std::vector<hub::ModelSummary>& items)> listed;
  };

  ListingHints(Deps deps, Options options, std::optional<int64_t> watermark);
  ~ListingHints();

  // Starts the rounds: the first at once, then one per interval. REQUIRES: called once.
  void Start();
  // Starts no further round; a round in flight ends without hinting.
  void Stop();
  void SetOptions(Options options) { options_ = options; }

  const ListingLedger& ledger() const { return ledger_; }
  bool reading() const { return round_ != nullptr; }
  // The mode of the last round that ended; nullopt before one did.
  std::optional<ListingMode> last_mode() const { return last_mode_; }

 private:
  struct Round;
  void BeginRound();
  // Plans the round on what the ledger knows; `probed`: the feed's first page was just read.
  void PlanRound(bool probed);
  void ReadNext();
  void ReadSource(const std::string& source, bool probe);
  void OnRead(const std::string& source, hub::HubResult<std::vector<hub::ModelSummary>> result,
              const hub::CallStats& stats);
  void EndRound();
  // The next round in `seconds` (at least 1), replacing a timer set before.
  void Arm(int64_t seconds);
  void CancelTimer();

  Deps deps_;
  Options options_;
  ListingLedger ledger_;
  std::optional<TimerId> timer_;  // the next round's, until it fires
  std::unique_ptr<Round> round_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool stopped_ = false;
  std::optional<ListingMode> last_mode_;
};

}  // namespace hubwatch::schedule
