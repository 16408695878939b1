#include "daemon/subscriptions/matcher.h"

#include <fnmatch.h>

#include <algorithm>

#include "daemon/config/config.h"

namespace hubwatch::subscriptions {
namespace {

constexpr size_t kMaxGlobBytes = 256;

}  // namespace

std::string SubscriptionTarget(int64_t id) { return "subscription:" + std::to_string(id); }

Status CheckFilters(const std::string& repos, const std::vector<std::string>& kinds,
                    const std::string& min_impact) {
  if (repos.empty() || repos.size() > kMaxGlobBytes) {
    return Error::InvalidInput("repos must be a glob of 1 to 256 characters");
  }
  int depth = 0;
  for (char c : repos) {
    if (c < 0x21 || c > 0x7e) return Error::InvalidInput("repos must be printable ASCII");
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
  }
  if (depth != 0) return Error::InvalidInput("repos has an unclosed [");
  for (const std::string& k : kinds) {
    diff::ChangeKind kind;
    if (k != kTracked && k != kUntracked && !diff::ParseKind(k, kind))
      return Error::InvalidInput("unknown change kind " + config::QuoteForError(k));
  }
  if (!diff::ParseImpact(min_impact)) {
    return Error::InvalidInput("min_impact must be cosmetic, behavioral or breaking");
  }
  return Status::Ok();
}

void SubscriptionMatcher::Reset(const std::vector<store::Subscription>& subscriptions) {
  auto filters = std::make_shared<std::vector<Filter>>();
  for (const store::Subscription& s : subscriptions) {
    if (s.disabled_at) continue;
    Filter f;
    f.id = s.id;
    f.repos = s.repos;
    for (const std::string& k : s.kinds) {
      diff::ChangeKind kind;
      if (diff::ParseKind(k, kind)) f.kinds.push_back(kind);
      f.tracked |= k == kTracked;
      f.untracked |= k == kUntracked;
    }
    // A kinds list of follow events only asks for no advisory; one of only unknown names must
    // not widen to "every kind".
    f.advisories = s.kinds.empty() || !f.kinds.empty();
    if (!f.advisories && !f.tracked && !f.untracked) continue;
    f.min_impact = s.min_impact;
    f.backfill = s.backfill;
    filters->push_back(std::move(f));
  }
  std::lock_guard<std::mutex> lock(mu_);
  filters_ = std::move(filters);
}

Status SubscriptionMatcher::Refresh(store::Store& reads) {
  Result<std::vector<store::Subscription>> all = reads.outbox().ListSubscriptions();
  if (!all.ok()) return all.error();
  Reset(*all);
  return Status::Ok();
}

std::vector<std::string> SubscriptionMatcher::Targets(const std::string& repo,
                                                      const diff::Change& change,
                                                      bool history) const {
  std::shared_ptr<const std::vector<Filter>> filters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    filters = filters_;
  }
  std::vector<std::string> out;
  for (const Filter& f : *filters) {
    if (!f.advisories || (history && !f.backfill)) continue;
    if (static_cast<int>(change.impact) < static_cast<int>(f.min_impact)) continue;
    if (!f.kinds.empty() &&
        std::find(f.kinds.begin(), f.kinds.end(), change.kind) == f.kinds.end()) {
      continue;
    }
    if (fnmatch(f.repos.c_str(), repo.c_str(), FNM_CASEFOLD) != 0) continue;
    out.push_back(SubscriptionTarget(f.id));
  }
  return out;
}

std::vector<int64_t> SubscriptionMatcher::FollowTargets(const std::string& repo,
                                                        const std::string& kind) const {
  std::shared_ptr<const std::vector<Filter>> filters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    filters = filters_;
  }
  std::vector<int64_t> out;
  for (const Filter& f : *filters) {
    if (!(kind == kTracked ? f.tracked : kind == kUntracked && f.untracked)) continue;
    if (fnmatch(f.repos.c_str(), repo.c_str(), FNM_CASEFOLD) != 0) continue;
    out.push_back(f.id);
  }
  return out;
}

store::FollowTargets SubscriptionMatcher::AsFollowTargets() {
  return [this](const std::string& repo, const std::string& kind) {
    return FollowTargets(repo, kind);
  };
}

pipeline::OutboxTargets SubscriptionMatcher::AsFunction() {
  return [this](const std::string& repo, const diff::Change& change, bool history) {
    return Targets(repo, change, history);
  };
}

size_t SubscriptionMatcher::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return filters_->size();
}

}  // namespace hubwatch::subscriptions
