#include "tracker/pipeline/poll_outcome.h"

#include <algorithm>

#include "tracker/advisory/time_text.h"

namespace hubwatch::pipeline {
namespace {

constexpr char kNeverSeenNote[] =
    "; never seen by this store: not published yet, private, or misspelled";

}  // namespace

store::RepoState StateFor(hub::HubErrorKind kind) {
  switch (kind) {
    case hub::HubErrorKind::kNotFound:
      return store::RepoState::kDeleted;
    case hub::HubErrorKind::kGatedAnonymous:
    case hub::HubErrorKind::kGatedNotApproved:
      return store::RepoState::kGated;
    case hub::HubErrorKind::kDisabled:
      return store::RepoState::kDisabled;
    default:
      return store::RepoState::kErroring;
  }
}

void RecordPolled(store::RepoRecord& record, const std::optional<std::string>& renamed_to,
                  int64_t now) {
  record.state = renamed_to ? store::RepoState::kRenamed : store::RepoState::kOk;
  record.state_detail = renamed_to ? "the Hub redirects it to " + *renamed_to : std::string();
  record.renamed_to = renamed_to;
  record.consecutive_errors = 0;
  record.last_polled_at = now;
}

void RecordGoodPoll(store::RepoRecord& record, const PollReport& report, int64_t now) {
  RecordPolled(record, report.renamed_to, now);
  if (report.trigger == store::PollTrigger::kReconcile) record.last_reconciled_at = now;
  if (record.caught_up_at == 0) record.caught_up_at = now;
  if (report.revisions > 0) record.last_change_found_by = report.trigger;
}

std::string FailureDetail(const std::string& why, bool never_seen) {
  return never_seen ? why + kNeverSeenNote : why;
}

void RecordFailed(store::RepoRecord& record, store::RepoState state, const std::string& detail,
                  int64_t now) {
  record.state = state;
  record.state_detail = detail;
  record.last_polled_at = now;
  if (state == store::RepoState::kErroring) ++record.consecutive_errors;
}

bool SameState(const store::RepoRecord& a, const store::RepoRecord& b) {
  return a.state == b.state && a.state_detail == b.state_detail && a.renamed_to == b.renamed_to &&
         a.consecutive_errors == b.consecutive_errors;
}

bool OnlyPollTimesChanged(store::Store& reads, const PollReport& report,
                          const store::RepoRecord& record, const store::RepoRecord& stored) {
  if (!report.ok || report.head_moved || !SameState(record, stored)) return false;
  Result<bool> held = reads.advisories().HasHeldAdvisories(report.repo);
  return held.ok() && !*held;
}

Persisted PersistPoll(store::Store& writer, const std::string& repo, int64_t now,
                      store::RepoRecord& record) {
  Persisted out;
  Result<store::Publication> p = writer.advisories().PublishSettled(repo, now);
  if (!p.ok()) {
    out.status = p.error();
    return out;
  }
  out.released = static_cast<int>(p->published);
  out.settles_at = p->next_settle_at;
  out.status = writer.repos().UpdateRepoPoll(record);
  return out;
}

void AddToReport(const Persisted& persisted, PollReport& report) {
  report.published += persisted.released;
  report.settles_at = persisted.settles_at;
  if (!persisted.status.ok() && report.ok) {
    report.ok = false;
    report.error = persisted.status.error().message;
  }
}

std::optional<std::string> SettleLine(const std::string& repo, const Persisted& persisted) {
  if (persisted.released > 0) {
    return repo + ": the burst settled: published " + std::to_string(persisted.released) +
           " held advisory(ies)";
  }
  if (persisted.settles_at) {
    return repo + ": advisories held until the burst settles at " +
           advisory::Rfc3339(*persisted.settles_at);
  }
  return std::nullopt;
}

}  // namespace hubwatch::pipeline
