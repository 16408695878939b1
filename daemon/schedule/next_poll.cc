#include "daemon/schedule/next_poll.h"

#include <algorithm>

namespace hubwatch::schedule {
namespace {

constexpr int64_t kMaxBackoffS = 24 * 3600;
constexpr int64_t kMaxBackoffDoublings = 6;
constexpr int64_t kUnavailableSlowdown = 4;  // deleted / gated / disabled repos poll 4x slower

}  // namespace

PollEnd PollEnd::Of(const pipeline::PollReport& report) {
  PollEnd end;
  end.ok = report.ok;
  end.state = report.state;
  end.consecutive_errors = report.consecutive_errors;
  end.never_seen = report.never_seen;
  end.settles_at = report.settles_at;
  return end;
}

int64_t WaitAfter(const PollEnd& end, int64_t interval_s) {
  if (end.ok) return interval_s;
  switch (end.state) {
    case store::RepoState::kErroring: {
      const int64_t doublings =
          std::clamp<int64_t>(end.consecutive_errors - 1, 0, kMaxBackoffDoublings);
      return std::min<int64_t>(kMaxBackoffS, interval_s << doublings);
    }
    case store::RepoState::kDeleted:
    case store::RepoState::kGated:
    case store::RepoState::kDisabled:
      return end.never_seen ? interval_s : interval_s * kUnavailableSlowdown;
    default:
      return interval_s;  // abandoned by a shutdown, or a state no failure sets
  }
}

}  // namespace hubwatch::schedule
