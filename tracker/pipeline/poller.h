#pragma once

// Poller: brings one tracked repository up to date, from the Hub into the store.
//
// One cheap request first: the repo's refs. When no tracked ref moved, that is all. Otherwise,
// per moved ref: the commit list back to the last known commit; a previous head missing from
// the new history is a history rewrite (super-squash, force-push), recorded as a `history`
// change with the old line marked rewritten-away. Then each new revision, oldest first: its
// recursive tree; the changed tracked small files (deduplicated by git oid, checked against
// it) and the headers of changed safetensors files (deduplicated by LFS sha256; weights are
// never downloaded); the diff engines against the previous revision; the estimate when config
// or headers changed; one OSV advisory per advised change; and one store Ingest transaction
// that also moves the ref cursor, so a crash between revisions loses nothing and repeats
// nothing. A file the Hub serves badly becomes an `error` change, never a stuck repo; a Hub
// error for the repo itself becomes its state (deleted, gated, disabled, erroring) and a later
// next poll.
//
// Thread safety: runs on the hub client's loop thread; the store is used from that thread, and
// the work handed to `offload` from the thread that runs it. Each poll reads the options it
// started with (an immutable snapshot): SetOptions, on the loop thread, never changes what a
// running poll sees. REQUIRES: the client and the store outlive every poll.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/clock.h"
#include "tracker/hub/client.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

using OutboxTargets = std::function<std::vector<std::string>(
    const std::string& repo, const diff::Change& change, bool history)>;

struct PollerOptions {
  bool advise_cosmetic = false;
  // A good poll also reads the repo's model info (downloads, likes, tags: one request) when the
  // stored one is older than this, never read, or the head moved. 0: never read.
  int64_t hub_info_interval_s = 0;
  // 0: advisories are published as their revision is ingested. Otherwise a burst of commits is
  // ingested as it arrives but its advisories are held until no commit came for this long (by
  // the commits' dates, clamped to now); the report says when the burst settles (the scheduler
  // polls the repo again then), and every poll publishes what has settled
  // (AdvisoryStore::PublishSettled).
  int64_t settle_window_s = 0;
  // The delivery targets of one advisory ("subscription:12"), one outbox row each; unset: none.
  // `history`: its change was committed before the repo was tracked (the repo's past, which is
  // published but notified only to those who ask for it).
  OutboxTargets outbox_targets;
  const Clock* clock = &SystemClock();  // never null; read from the loop and the store thread
  // Test hook: runs after a revision is fetched and built, just before it is committed.
  std::function<void(const std::string& repo, const std::string& sha)> before_commit;
  std::function<void(std::string_view line)> log;
  // Runs the heavy part of a revision (diffs, estimate, the commit) off the loop thread:
  // offload(work, then) runs work() elsewhere and then() back on the loop thread. Unset: inline.
  // work() uses `writer`, a store connection of its own thread (unset: the poller's store).
  std::function<void(std::function<void()> work, std::function<void()> then)> offload;
  store::Store* writer = nullptr;
  // An unchanged poll (head where it was, state as stored, nothing held) changes only the
  // repo's poll times, and losing that write only makes the repo due again sooner:
  // write_soon(work) runs work() with `writer` later, in a batch, and nobody waits for it.
  // Unset: such a poll records its times like any other (offload, or inline).
  std::function<void(std::function<Status()> work)> write_soon;
};

struct PollReport {
  std::string repo;
  bool ok = true;
  std::string error;  // why not ok
  store::RepoState state = store::RepoState::kOk;
  // kDeleted for a repo with no stored head: a 404 before its first revision (polled at the
  // normal interval, not slowed down like a repo that disappeared).
  bool never_seen = false;
  store::PollTrigger trigger = store::PollTrigger::kPoll;  // what started the poll
  bool first_poll = false;  // the repo had not caught up yet (RepoRecord::caught_up_at)
  bool head_moved = false;
  bool history_rewritten = false;
  std::optional<std::string> renamed_to;  // the Hub redirected the repo to this id
  int revisions = 0;                      // ingested by this poll
  std::vector<double> ingest_seconds;     // per revision ingested: tree read to commit
  int changes = 0;
  int advisories = 0;  // recorded (published at once or held)
  int published = 0;   // advisories this poll published: its own unheld ones and released ones
  std::optional<int64_t> settles_at;  // when the advisories still held for the repo settle
  int64_t consecutive_errors = 0;     // the repo's failed polls in a row, this one included
  bool abandoned = false;             // stopped by a shutdown: nothing was recorded
  hub::CallStats stats;               // every request this poll made
};

class Poller {
 public:
  Poller(hub::HubClient& hub, store::Store& store, PollerOptions options);
  ~Poller();

  // New options for polls started from now on; running polls keep the ones they started with.
  // REQUIRES: called on the loop thread.
  void SetOptions(PollerOptions options);

  // Polls `repo`, which must be in the store. `done` runs exactly once, on the loop thread.
  // `trigger` is what started it: a poll that finds a new revision records it in the repo as
  // how its last change was found, and a kReconcile poll records the repo's last reconcile.
  void Poll(const std::string& repo, store::PollTrigger trigger,
            std::function<void(PollReport)> done);
  void Poll(const std::string& repo, std::function<void(PollReport)> done);  // kPoll

 private:
  class RepoPoll;
  hub::HubClient& hub_;
  store::Store& store_;
  std::shared_ptr<const PollerOptions> options_;  // never null
};

}  // namespace hubwatch::pipeline
