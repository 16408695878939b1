#pragma once

// FollowStore: follow rules, the repos they brought, and the "tracked" / "untracked" events
// (tables follow_rules, follows, follow_events). A rule brings a repo by tracking it from its
// head (RepoRecord::baseline, unless the rule backfills); a repo that stops matching is untracked
// (repos.tracked = 0), its history kept. An event is queued for the webhook subscriptions that
// ask for it (FollowTargets; follow_outbox, which DeliveryQueue delivers). A repo the configuration or the API names is never a
// rule's (RepoStore::AddRepo drops its follows row), so no rule untracks it.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/database.h"
#include "tracker/store/records.h"

namespace hubwatch::store {

// A repo a rule is to bring.
struct FollowTrack {
  std::string repo;
  std::string rule;
  std::vector<std::string> refs{"main"};
  bool baseline = true;
  std::string sha;  // the head its listing showed, for the event
};

// The webhook subscriptions (ids) that asked for a follow event of `kind` on `repo`.
using FollowTargets =
    std::function<std::vector<int64_t>(const std::string& repo, const std::string& kind)>;

class FollowStore {
 public:
  explicit FollowStore(Database& db) : db_(db) {}

  // The rules, by name, with the counts of the repos each brought.
  Result<std::vector<FollowRuleRecord>> ListRules();
  Result<std::optional<FollowRuleRecord>> GetRule(const std::string& name);
  // Inserts `rule`, or replaces the spec of one with that name from the same source. A name
  // another source holds is InvalidInput (the configuration's rules are its own).
  Status PutRule(const FollowRuleRecord& rule);
  // Removes the rule (nothing when there is none) and untracks the repos it brought (events,
  // history kept). Returns the repos untracked.
  Result<std::vector<std::string>> RemoveRule(const std::string& name, int64_t now,
                                              const FollowTargets& targets = {});
  Status SetWalked(const std::string& rule, int64_t at);

  // Tracks each repo of `repos` that is not tracked now: a new repo (source api, its rule's
  // refs and baseline) or one untracked before; a follows row and a "tracked" event each. In
  // one transaction. A repo is found by its id in any letter case (the Hub's ids are resolved
  // so): one tracked in other letters is skipped, one untracked in other letters is tracked
  // again under the id it is stored under. Returns the ids it tracked, as stored.
  Result<std::vector<std::string>> Track(const std::vector<FollowTrack>& repos, int64_t now,
                                         const FollowTargets& targets = {});
  // The tracked repo whose id is `id` in any letter case, if any.
  Result<std::optional<std::string>> TrackedIgnoringCase(const std::string& id);
  // Records that a listing showed `repos` (ids in any letter case, brought by `rule`) matching
  // it at `now`: their last match is `now` and their count of missed walks 0.
  Status Matched(const std::string& rule, const std::vector<std::string>& repos, int64_t now);
  // Records a complete walk of `rule` at `now`, after Matched: each tracked repo it brought
  // whose last match is before `now` was missed by one more walk in a row.
  Status Missed(const std::string& rule, int64_t now);
  // The tracked repos `rule` brought whose last match is at or before `before` and that at least
  // `min_missed` complete walks in a row did not show.
  Result<std::vector<std::string>> UnmatchedSince(const std::string& rule, int64_t before,
                                                  int64_t min_missed = 0);
  // Untracks repos a rule brought (history kept), an "untracked" event each, in one
  // transaction.
  Status Untrack(const std::vector<std::string>& repos, const std::string& reason, int64_t now,
                 const FollowTargets& targets = {});

  // Events after `seq`, oldest first, at most `limit`.
  Result<std::vector<FollowEvent>> EventsAfter(int64_t seq, int64_t limit);
  // The newest events first, at most `limit`.
  Result<std::vector<FollowEvent>> LatestEvents(int64_t limit);
  Result<int64_t> LastEventSeq();  // 0: none yet

 private:
  // The event, and a follow_outbox row for each subscription `targets` names.
  Status AddEvent(const FollowEvent& event, const FollowTargets& targets);
  Database& db_;
};

}  // namespace hubwatch::store
