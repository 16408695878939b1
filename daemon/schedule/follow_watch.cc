#include "daemon/schedule/follow_watch.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <utility>

#include "daemon/config/config.h"
#include "daemon/service/metrics.h"
#include "tracker/store/store.h"

namespace hubwatch::schedule {
namespace {

// How often the watch looks for a rule due a walk.
constexpr int64_t kTickS = 60;
// The complete walks in a row that must miss a repo before it is untracked.
constexpr int64_t kMissedWalksToUntrack = 2;

// Logs each rule whose caps started or stopped leaving repos out (`was`: its capped before).
void LogCaps(spdlog::logger& log, const std::vector<FollowState>& rules,
             const std::vector<int64_t>& was, const FollowSelection& selection,
             int64_t max_total) {
  for (size_t i = 0; i < rules.size() && i < was.size(); ++i) {
    const FollowState& r = rules[i];
    if ((was[i] == 0) == (r.capped == 0)) continue;
    if (r.capped == 0) {
      log.info("follow rule {}: its cap no longer leaves any repo it matches untracked",
               config::QuoteForError(r.rule.name));
      continue;
    }
    const auto first = selection.first_refused.find(r.rule.name);
    log.warn(
        "follow rule {}: its cap is reached ({} {}): {} repo(s) it matches are left untracked "
        "(the first: {}); counted in capped, logged again once the cap leaves none out",
        config::QuoteForError(r.rule.name),
        r.refused_by_total ? "poll.max_followed_repos" : "max_repos",
        r.refused_by_total ? max_total : r.rule.max_repos, r.capped,
        first == selection.first_refused.end() ? std::string("?")
                                               : config::QuoteForError(first->second));
  }
}

// A round's store write: tracks `fresh` (into `tracked`); after a complete walk of
// `walk_rule`, records what it showed and missed and untracks (into `untracked`) the repos two
// walks in a row missed whose last match is at or before `unmatched_before`.
Status RecordRound(store::Store& w, const std::vector<store::FollowTrack>& fresh,
                   const std::vector<std::string>& matched,
                   const std::optional<std::string>& walk_rule, int64_t now,
                   int64_t unmatched_before, const store::FollowTargets& targets,
                   std::vector<std::string>& tracked, std::vector<std::string>& untracked) {
  Result<std::vector<std::string>> t = w.follows().Track(fresh, now, targets);
  if (!t.ok()) return t.error();
  tracked = std::move(t).value();
  if (!walk_rule) return Status::Ok();
  if (Status s = w.follows().Matched(*walk_rule, matched, now); !s.ok()) return s;
  if (Status s = w.follows().Missed(*walk_rule, now); !s.ok()) return s;
  Result<std::vector<std::string>> gone =
      w.follows().UnmatchedSince(*walk_rule, unmatched_before, kMissedWalksToUntrack);
  if (!gone.ok()) return gone.error();
  untracked = std::move(gone).value();
  return w.follows().Untrack(
      untracked, "not in two walks in a row of the listing of follow rule " + *walk_rule, now,
      targets);
}

// Logs each repo of `fresh` that `tracked` (the ids Track tracked, as stored) holds; returns
// how many of the others each rule took.
std::map<std::string, int64_t> LogTracked(spdlog::logger& log,
                                          const std::vector<store::FollowTrack>& fresh,
                                          const std::vector<std::string>& tracked) {
  std::map<std::string, std::string> stored;  // FoldedId -> the id tracked
  for (const std::string& id : tracked) stored.emplace(FoldedId(id), id);
  std::map<std::string, int64_t> not_tracked;
  for (const store::FollowTrack& t : fresh) {
    const auto id = stored.find(FoldedId(t.repo));
    if (id == stored.end()) {
      ++not_tracked[t.rule];
      continue;
    }
    log.info("{}: tracked, follow rule {} ({}; listed at {})", id->second, t.rule,
             t.baseline ? "from its head, no history" : "with its history",
             t.sha.empty() ? std::string("?") : t.sha.substr(0, 7));
  }
  return not_tracked;
}

}  // namespace

struct FollowWatch::Walk {
  std::string rule;
  int64_t started_at = 0;
};

FollowWatch::FollowWatch(Deps deps, Options options)
    : deps_(std::move(deps)), options_(options) {}

FollowWatch::~FollowWatch() {
  *alive_ = false;
  if (timer_) deps_.clock->Cancel(*timer_);
}

void FollowWatch::Start() { Tick(); }

void FollowWatch::Stop() {
  stopped_ = true;
  if (timer_) deps_.clock->Cancel(*std::exchange(timer_, std::nullopt));
}

void FollowWatch::SetRules(std::vector<FollowState> rules) {
  for (FollowState& next : rules) {  // what this run learned of a rule that stays
    if (FollowState* was = Find(next.rule.name)) {
      next.capped = was->capped;
      next.requests = was->requests;
      next.refused = std::move(was->refused);
      next.refused_by_total = was->refused_by_total;
    }
  }
  rules_ = std::move(rules);
  if (walk_ && !Find(walk_->rule)) walk_.reset();  // its answer is dropped
  if (!stopped_ && timer_) Arm(0);                 // a new rule walks now
}

FollowState* FollowWatch::Find(const std::string& name) {
  for (FollowState& r : rules_) {
    if (r.rule.name == name) return &r;
  }
  return nullptr;
}

std::vector<std::string> FollowWatch::owners() const {
  std::set<std::string> owners;
  for (const FollowState& r : rules_) {
    if (!r.rule.owner.empty()) owners.insert(r.rule.owner);
  }
  return {owners.begin(), owners.end()};
}

bool FollowWatch::needs_details() const {
  return std::any_of(rules_.begin(), rules_.end(), [](const FollowState& r) {
    return !config::FollowListingFilters(r.rule).empty() || r.rule.min_downloads > 0 ||
           r.rule.min_likes > 0;
  });
}

void FollowWatch::Arm(int64_t seconds) {
  if (stopped_) return;
  if (timer_) deps_.clock->Cancel(*timer_);
  timer_ = deps_.clock->RunAt(deps_.clock->Now() + std::chrono::seconds(seconds), [this] {
    timer_.reset();
    Tick();
  });
}

void FollowWatch::Tick() {
  if (stopped_) return;
  if (!walk_) {
    const int64_t now = deps_.clock->UnixSeconds();
    for (size_t i = 0; i < rules_.size(); ++i) {
      if (rules_[i].walked_at == 0 || rules_[i].walked_at + options_.reconcile_s <= now) {
        StartWalk(i);
        break;
      }
    }
  }
  Arm(kTickS);
}

void FollowWatch::StartWalk(size_t index) {
  const config::FollowRule& rule = rules_[index].rule;
  walk_ = std::make_shared<Walk>(Walk{rule.name, deps_.clock->UnixSeconds()});
  deps_.hub->ListModels(WalkOptions(rule, options_.page_size, options_.max_pages),
                        [this, alive = alive_, walk = walk_](auto result, auto& stats) {
                          if (*alive) EndWalk(walk, std::move(result), stats);
                        });
}

void FollowWatch::EndWalk(const std::shared_ptr<Walk>& walk,
                          hub::HubResult<std::vector<hub::ModelSummary>> result,
                          const hub::CallStats& stats) {
  if (stats.requests > 0) deps_.spend(stats.requests);
  deps_.metrics->counter("hubwatch_follow_requests_total", "listing requests of follow walks")
      .Add(static_cast<uint64_t>(stats.requests));
  if (walk != walk_ || stopped_) return;  // its rule went, or the service is stopping
  walk_.reset();
  FollowState* state = Find(walk->rule);
  if (!state) return;
  state->requests += stats.requests;
  const bool ok = result.ok();
  deps_.metrics
      ->counter("hubwatch_follow_walks_total", "walks of follow rules' listings by outcome",
                {{"outcome", ok ? "ok" : "error"}})
      .Add();
  if (!ok) {
    deps_.log->warn("follow rule {}: its listing walk failed after {} request(s): {}; tried again "
                    "in {} s",
                    walk->rule, stats.requests, result.error().ToString(), kTickS);
    return;
  }
  // A walk that stopped at its page limit is not complete: nothing is untracked on it.
  const bool complete = result->size() < static_cast<size_t>(options_.page_size) *
                                             static_cast<size_t>(std::max(1, options_.max_pages));
  state->walked_at = walk->started_at;
  deps_.log->info("follow rule {}: walked its listing, {} repo(s) in {} request(s){}", walk->rule,
                  result->size(), stats.requests, complete ? "" : " (stopped at the page limit)");
  TrackMatches(*result, complete ? std::optional<std::string>(walk->rule) : std::nullopt);
  deps_.store->Write(
      [rule = walk->rule, at = walk->started_at](store::Store& w) {
        return w.follows().SetWalked(rule, at);
      },
      nullptr);
  Arm(0);  // another rule may be due: one walk after the other
}

void FollowWatch::Offer(const std::vector<hub::ModelSummary>& items) {
  if (!rules_.empty() && !stopped_) TrackMatches(items, std::nullopt);
}

bool FollowWatch::Taken(const std::string& id) {
  if (deps_.tracked(id) || pending_.count(FoldedId(id)) != 0) return true;
  // Tracked in other letters (a name the configuration spells its own way). A failed read
  // leaves it to Track, which skips it as well.
  Result<std::optional<std::string>> other =
      deps_.store->reads().follows().TrackedIgnoringCase(id);
  return other.ok() && other->has_value();
}

void FollowWatch::TrackMatches(const std::vector<hub::ModelSummary>& items,
                               std::optional<std::string> walk_rule) {
  std::vector<int64_t> was;
  for (const FollowState& r : rules_) was.push_back(r.capped);
  FollowSelection selection = SelectFollows(rules_, items, walk_rule, options_.max_total,
                                            [this](const std::string& id) { return Taken(id); });
  LogCaps(*deps_.log, rules_, was, selection, options_.max_total);
  if (selection.capped > 0) {
    deps_.metrics->counter("hubwatch_follow_capped_total", "repos a cap newly left untracked")
        .Add(static_cast<uint64_t>(selection.capped));
  }
  for (const store::FollowTrack& t : selection.fresh) {
    pending_.insert(FoldedId(t.repo));
    if (FollowState* r = Find(t.rule)) ++r->tracked;  // counted against its cap from now
  }
  std::vector<store::FollowTrack> fresh = std::move(selection.fresh);
  std::vector<std::string> matched = std::move(selection.matched);
  if (fresh.empty() && !walk_rule) return;
  const int64_t now = deps_.clock->UnixSeconds();
  const int64_t unmatched_before = now - options_.reconcile_s;
  auto untracked = std::make_shared<std::vector<std::string>>();
  auto tracked = std::make_shared<std::vector<std::string>>();
  deps_.store->Write(
      [fresh, matched, walk_rule, now, unmatched_before, tracked, untracked,
       targets = deps_.targets](store::Store& w) -> Status {
        return w.Atomically([&]() -> Status {
          return RecordRound(w, fresh, matched, walk_rule, now, unmatched_before, targets,
                             *tracked, *untracked);
        });
      },
      [this, alive = alive_, fresh, walk_rule, tracked, untracked](Status s) {
        if (!*alive) return;
        for (const store::FollowTrack& t : fresh) pending_.erase(FoldedId(t.repo));
        const std::map<std::string, int64_t> not_tracked =
            LogTracked(*deps_.log, fresh, s.ok() ? *tracked : std::vector<std::string>{});
        for (const auto& [rule, n] : not_tracked) {
          if (FollowState* r = Find(rule)) r->tracked = std::max<int64_t>(0, r->tracked - n);
        }
        if (!s.ok()) {
          deps_.log->error("follow rules: recording {} repo(s) to track failed: {}", fresh.size(),
                           s.error().message);
          return;
        }
        for (const std::string& repo : *untracked) {
          deps_.log->info("{}: untracked, two walks in a row of its follow rule's listing did "
                          "not show it; its history is kept",
                          repo);
        }
        deps_.metrics->counter("hubwatch_follow_tracked_total", "repos follow rules tracked")
            .Add(tracked->size());
        deps_.metrics->counter("hubwatch_follow_untracked_total", "repos follow rules untracked")
            .Add(untracked->size());
        if (!tracked->empty()) deps_.track(*tracked);
        if (!untracked->empty()) {
          deps_.untrack(*untracked);
          if (FollowState* r = Find(*walk_rule)) {
            r->tracked = std::max<int64_t>(0, r->tracked - static_cast<int64_t>(untracked->size()));
          }
        }
        if (!tracked->empty() || !untracked->empty()) deps_.announced();
      });
}

}  // namespace hubwatch::schedule
