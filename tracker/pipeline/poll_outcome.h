#pragma once

// The outcome of a poll in the repo's record: its state, its error count, when it was polled.
// Then persisting it, after publishing the advisories whose burst has settled. When the repo is
// polled next is not the pipeline's to say: the report tells the scheduler what happened (state,
// errors in a row, never seen, a burst's settle time) and the scheduler decides and records it
// (daemon/schedule/next_poll.h).
//
// Pure functions but PersistPoll, which runs on the thread that owns `writer`.

#include <cstdint>
#include <optional>
#include <string>

#include "estimator/base/result.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

// The repo's state after a Hub error about the repo itself.
store::RepoState StateFor(hub::HubErrorKind kind);

// A good poll at `now`: ok or renamed (following the redirect), no errors.
void RecordPolled(store::RepoRecord& record, const std::optional<std::string>& renamed_to,
                  int64_t now);

// RecordPolled for the poll `report` tells of: the reconcile time of a kReconcile poll; the
// trigger of a poll that found a new revision as how the repo's last change was found.
void RecordGoodPoll(store::RepoRecord& record, const PollReport& report, int64_t now);

// `why` as reported and stored: a repo never seen by this store gets a note saying so.
std::string FailureDetail(const std::string& why, bool never_seen);

// A failed poll at `now`: the state with `detail`; one more error in a row when it is kErroring.
void RecordFailed(store::RepoRecord& record, store::RepoState state, const std::string& detail,
                  int64_t now);

// Whether the two records hold the same state: state, detail, rename and error count.
bool SameState(const store::RepoRecord& a, const store::RepoRecord& b);

// Whether the poll `report` tells of changed nothing but the repo's poll times: it ended well,
// the head had not moved, the state is as stored (`record` against `stored`, read at the start),
// and the repo holds no advisories (PublishSettled would have nothing to do, now or later).
bool OnlyPollTimesChanged(store::Store& reads, const PollReport& report,
                          const store::RepoRecord& record, const store::RepoRecord& stored);

struct Persisted {
  Status status;                      // of publishing and recording
  int released = 0;                   // held advisories published
  std::optional<int64_t> settles_at;  // when the advisories still held settle
};

// Publishes what has settled by `now` and records `record`. A failed publication records
// nothing.
Persisted PersistPoll(store::Store& writer, const std::string& repo, int64_t now,
                      store::RepoRecord& record);

// What persisting adds to the poll's report: the advisories released, the settle time still
// ahead, and the failure to persist when the poll had none before.
void AddToReport(const Persisted& persisted, PollReport& report);

// The log line about held advisories after PersistPoll; nullopt when there is nothing to say.
std::optional<std::string> SettleLine(const std::string& repo, const Persisted& persisted);

}  // namespace hubwatch::pipeline
