#include "tracker/pipeline/poll_outcome.h"

#include <algorithm>

#include "tracker/advisory/time_text.h"

namespace hubwatch::pipeline {
namespace {

constexpr int64_t kMaxBackoffS = 24 * 3600;
constexpr int kMaxBackoffDoublings = 6;
constexpr int kUnavailableSlowdown = 4;  // deleted / gated / disabled repos poll 4x slower
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
                  int64_t now, int64_t interval_s) {
  record.state = renamed_to ? store::RepoState::kRenamed : store::RepoState::kOk;
  record.state_detail = renamed_to ? "the Hub redirects it to " + *renamed_to : std::string();
  record.renamed_to = renamed_to;
  record.consecutive_errors = 0;
  record.last_polled_at = now;
  record.next_poll_at = now + interval_s;
}

void RecordGoodPoll(store::RepoRecord& record, const PollReport& report, int64_t now,
                    const PollerOptions& options) {
  RecordPolled(
      record, report.renamed_to, now,
      options.reconcile_interval_s > 0 ? options.reconcile_interval_s : options.interval_s);
  if (report.trigger == store::PollTrigger::kReconcile) record.last_reconciled_at = now;
  if (record.caught_up_at == 0) record.caught_up_at = now;
  if (report.revisions > 0) record.last_change_found_by = report.trigger;
}

std::string FailureDetail(const std::string& why, bool never_seen) {
  return never_seen ? why + kNeverSeenNote : why;
}

void RecordFailed(store::RepoRecord& record, store::RepoState state, const std::string& detail,
                  bool never_seen, int64_t now, int64_t interval_s) {
  record.state = state;
  record.state_detail = detail;
  record.last_polled_at = now;
  int64_t wait = interval_s;
  if (state == store::RepoState::kErroring) {
    ++record.consecutive_errors;
    wait = std::min<int64_t>(kMaxBackoffS, wait << std::min<int64_t>(record.consecutive_errors - 1,
                                                                     kMaxBackoffDoublings));
  } else if (!never_seen) {  // one announced before it is published polls as usual
    wait *= kUnavailableSlowdown;
  }
  record.next_poll_at = now + wait;
}

bool SameState(const store::RepoRecord& a, const store::RepoRecord& b) {
  return a.state == b.state && a.state_detail == b.state_detail && a.renamed_to == b.renamed_to &&
         a.consecutive_errors == b.consecutive_errors;
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
  if (p->next_settle_at && *p->next_settle_at < record.next_poll_at) {
    record.next_poll_at = *p->next_settle_at;
  }
  out.status = writer.repos().UpdateRepoPoll(record);
  return out;
}

void AddToReport(const Persisted& persisted, const store::RepoRecord& record, PollReport& report) {
  report.published += persisted.released;
  report.settles_at = persisted.settles_at;
  report.next_poll_at = record.next_poll_at;
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
