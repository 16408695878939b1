#include "tracker/store/follow_store.h"

#include <utility>

#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

constexpr const char kRuleColumns[] =
    "SELECT name, source, spec, created_at, walked_at, "
    "(SELECT COUNT(*) FROM follows f JOIN repos r ON r.id = f.repo "
    " WHERE f.rule = follow_rules.name AND r.tracked = 1), "
    "(SELECT COUNT(*) FROM follows f JOIN repos r ON r.id = f.repo "
    " WHERE f.rule = follow_rules.name AND r.tracked = 0) FROM follow_rules ";

Result<FollowRuleRecord> ReadRule(const Statement& q) {
  FollowRuleRecord r;
  r.name = q.Text(0);
  const std::optional<Source> source = ParseSource(q.Text(1));
  if (!source) return Error::Io("store: the source of follow rule " + r.name + " is damaged");
  r.source = *source;
  r.spec = q.Text(2);
  r.created_at = q.Int(3);
  r.walked_at = q.Int(4);
  r.tracked = q.Int(5);
  r.untracked = q.Int(6);
  return r;
}

constexpr const char kEventColumns[] =
    "SELECT seq, repo, kind, rule, sha, reason, at FROM follow_events ";

FollowEvent ReadEvent(const Statement& q) {
  return {q.Int(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4), q.Text(5), q.Int(6)};
}

std::string RefsJson(const std::vector<std::string>& refs) {
  return DumpJson(nlohmann::json(refs));
}

}  // namespace

Result<std::vector<FollowRuleRecord>> FollowStore::ListRules() {
  static const std::string sql = std::string(kRuleColumns) + "ORDER BY name";
  HW_PREPARE(q, sql);
  return Collect(q, "listing follow rules", ReadRule);
}

Result<std::optional<FollowRuleRecord>> FollowStore::GetRule(const std::string& name) {
  static const std::string sql = std::string(kRuleColumns) + "WHERE name = ?1";
  HW_PREPARE(q, sql);
  q.Bind(1, name);
  return OptionalRow(q, "reading follow rule " + name, ReadRule);
}

Status FollowStore::PutRule(const FollowRuleRecord& rule) {
  return db_.Atomically([&]() -> Status {
    Result<std::optional<FollowRuleRecord>> existing = GetRule(rule.name);
    if (!existing.ok()) return existing.error();
    if (*existing && (*existing)->source != rule.source) {
      return Error::InvalidInput("a follow rule named \"" + rule.name + "\" comes from the " +
                                 std::string(SourceName((*existing)->source)) +
                                 (((*existing)->source == Source::kConfig) ? "uration" : ""));
    }
    HW_PREPARE(q,
               "INSERT INTO follow_rules (name, source, spec, created_at) VALUES (?1, ?2, ?3, ?4) "
               "ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, "
               "walked_at = CASE WHEN spec = excluded.spec THEN walked_at ELSE 0 END");
    return q.Bind(1, rule.name)
        .Bind(2, SourceName(rule.source))
        .Bind(3, rule.spec)
        .Bind(4, rule.created_at)
        .Run("storing follow rule " + rule.name);
  });
}

Result<std::vector<std::string>> FollowStore::RemoveRule(const std::string& name, int64_t now,
                                                         const FollowTargets& targets) {
  std::vector<std::string> untracked;
  Status s = db_.Atomically([&]() -> Status {
    HW_PREPARE(q,
               "SELECT f.repo FROM follows f JOIN repos r ON r.id = f.repo "
               "WHERE f.rule = ?1 AND r.tracked = 1 ORDER BY f.repo");
    q.Bind(1, name);
    Result<std::vector<std::string>> repos = Column0(q, "listing the repos of a follow rule");
    if (!repos.ok()) return repos.error();
    untracked = std::move(repos).value();
    HW_TRY(Untrack(untracked, "the follow rule " + name + " was removed", now, targets));
    HW_PREPARE(f, "DELETE FROM follows WHERE rule = ?1");
    HW_TRY(f.Bind(1, name).Run("forgetting the repos of follow rule " + name));
    HW_PREPARE(d, "DELETE FROM follow_rules WHERE name = ?1");
    return d.Bind(1, name).Run("removing follow rule " + name);
  });
  if (!s.ok()) return s.error();
  return untracked;
}

Status FollowStore::SetWalked(const std::string& rule, int64_t at) {
  HW_PREPARE(q, "UPDATE follow_rules SET walked_at = ?2 WHERE name = ?1");
  return q.Bind(1, rule).Bind(2, at).Run("recording the walk of follow rule " + rule);
}

Result<std::vector<std::string>> FollowStore::Track(const std::vector<FollowTrack>& repos,
                                                    int64_t now, const FollowTargets& targets) {
  std::vector<std::string> tracked;
  Status s = db_.Atomically([&]() -> Status {
    for (const FollowTrack& t : repos) {
      // The row in any letters, a tracked one first, then the one spelled as listed.
      HW_PREPARE(existing,
                 "SELECT id, tracked FROM repos WHERE id = ?1 COLLATE NOCASE "
                 "ORDER BY tracked DESC, id = ?1 DESC LIMIT 1");
      existing.Bind(1, t.repo);
      Result<std::optional<std::pair<std::string, int64_t>>> was =
          OptionalRow(existing, "reading repo " + t.repo,
                      [](Statement& r) { return std::make_pair(r.Text(0), r.Int(1)); });
      if (!was.ok()) return was.error();
      if (*was && (*was)->second != 0) continue;  // tracked already, by a rule or by name
      const std::string id = *was ? (*was)->first : t.repo;
      HW_PREPARE(q,
                 "INSERT INTO repos (id, refs, added_at, next_poll_at, source, baseline) "
                 "VALUES (?1, ?2, ?3, ?3, 'api', ?4) "
                 "ON CONFLICT (id) DO UPDATE SET tracked = 1, refs = excluded.refs");
      HW_TRY(q.Bind(1, id)
                 .Bind(2, RefsJson(t.refs))
                 .Bind(3, now)
                 .Bind(4, int64_t{t.baseline ? 1 : 0})
                 .Run("tracking repo " + id));
      HW_PREPARE(f,
                 "INSERT INTO follows (repo, rule, tracked_at, matched_at) VALUES (?1, ?2, ?3, ?3) "
                 "ON CONFLICT (repo) DO UPDATE SET rule = excluded.rule, "
                 "tracked_at = excluded.tracked_at, matched_at = excluded.matched_at, missed = 0");
      HW_TRY(f.Bind(1, id).Bind(2, t.rule).Bind(3, now).Run("following repo " + id));
      HW_TRY(AddEvent({0, id, "tracked", t.rule, t.sha, "", now}, targets));
      tracked.push_back(id);
    }
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  return tracked;
}

Result<std::optional<std::string>> FollowStore::TrackedIgnoringCase(const std::string& id) {
  HW_PREPARE(q,
             "SELECT id FROM repos WHERE id = ?1 COLLATE NOCASE AND tracked = 1 "
             "ORDER BY id LIMIT 1");
  q.Bind(1, id);
  return OptionalRow(q, "looking up repo " + id, [](Statement& r) { return r.Text(0); });
}

Status FollowStore::Matched(const std::string& rule, const std::vector<std::string>& repos,
                            int64_t now) {
  return db_.Atomically([&]() -> Status {
    for (const std::string& repo : repos) {
      // By the repo's key: "+rule" keeps SQLite from reading all the rule's rows instead.
      HW_PREPARE(q,
                 "UPDATE follows SET matched_at = ?3, missed = 0 WHERE +rule = ?2 AND repo IN "
                 "(SELECT id FROM repos WHERE id = ?1 COLLATE NOCASE)");
      HW_TRY(q.Bind(1, repo).Bind(2, rule).Bind(3, now).Run("recording a match of " + repo));
    }
    return Status::Ok();
  });
}

Status FollowStore::Missed(const std::string& rule, int64_t now) {
  HW_PREPARE(q,
             "UPDATE follows SET missed = missed + 1 WHERE rule = ?1 AND matched_at < ?2 AND "
             "EXISTS (SELECT 1 FROM repos r WHERE r.id = follows.repo AND r.tracked = 1)");
  return q.Bind(1, rule).Bind(2, now).Run("recording the repos a walk of " + rule + " missed");
}

Result<std::vector<std::string>> FollowStore::UnmatchedSince(const std::string& rule,
                                                             int64_t before, int64_t min_missed) {
  HW_PREPARE(q,
             "SELECT f.repo FROM follows f JOIN repos r ON r.id = f.repo "
             "WHERE f.rule = ?1 AND f.matched_at <= ?2 AND f.missed >= ?3 AND r.tracked = 1 "
             "ORDER BY f.repo");
  q.Bind(1, rule).Bind(2, before).Bind(3, min_missed);
  return Column0(q, "listing the unmatched repos of follow rule " + rule);
}

Status FollowStore::Untrack(const std::vector<std::string>& repos, const std::string& reason,
                            int64_t now, const FollowTargets& targets) {
  return db_.Atomically([&]() -> Status {
    for (const std::string& repo : repos) {
      HW_PREPARE(rule, "SELECT rule FROM follows WHERE repo = ?1");
      rule.Bind(1, repo);
      Result<std::optional<std::string>> by =
          OptionalRow(rule, "reading the rule of " + repo, [](Statement& r) { return r.Text(0); });
      if (!by.ok()) return by.error();
      if (!*by) continue;  // not a rule's
      HW_PREPARE(q, "UPDATE repos SET tracked = 0 WHERE id = ?1 AND tracked = 1");
      HW_TRY(q.Bind(1, repo).Run("untracking repo " + repo));
      if (sqlite3_changes(db_.handle()) == 0) continue;
      HW_TRY(AddEvent({0, repo, "untracked", **by, "", reason, now}, targets));
    }
    return Status::Ok();
  });
}

Status FollowStore::AddEvent(const FollowEvent& e, const FollowTargets& targets) {
  HW_PREPARE(q,
             "INSERT INTO follow_events (repo, kind, rule, sha, reason, at) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  HW_TRY(q.Bind(1, e.repo)
             .Bind(2, e.kind)
             .Bind(3, e.rule)
             .Bind(4, e.sha)
             .Bind(5, e.reason)
             .Bind(6, e.at)
             .Run("recording a follow event for " + e.repo));
  if (!targets) return Status::Ok();
  const int64_t seq = sqlite3_last_insert_rowid(db_.handle());
  for (int64_t subscription : targets(e.repo, e.kind)) {
    HW_PREPARE(o,
               "INSERT OR IGNORE INTO follow_outbox (event_seq, subscription_id, created_at) "
               "VALUES (?1, ?2, ?3)");  // due at once, as the outbox's rows
    HW_TRY(o.Bind(1, seq).Bind(2, subscription).Bind(3, e.at).Run("queueing a follow event"));
  }
  return Status::Ok();
}

Result<std::vector<FollowEvent>> FollowStore::EventsAfter(int64_t seq, int64_t limit) {
  static const std::string sql = std::string(kEventColumns) + "WHERE seq > ?1 ORDER BY seq LIMIT ?2";
  HW_PREPARE(q, sql);
  q.Bind(1, seq).Bind(2, limit);
  return Collect(q, "reading follow events", ReadEvent);
}

Result<std::vector<FollowEvent>> FollowStore::LatestEvents(int64_t limit) {
  static const std::string sql = std::string(kEventColumns) + "ORDER BY seq DESC LIMIT ?1";
  HW_PREPARE(q, sql);
  q.Bind(1, limit);
  return Collect(q, "reading follow events", ReadEvent);
}

Result<int64_t> FollowStore::LastEventSeq() {
  HW_PREPARE(q, "SELECT COALESCE(MAX(seq), 0) FROM follow_events");
  Result<std::optional<int64_t>> r =
      OptionalRow(q, "reading the last follow event", [](Statement& s) { return s.Int(0); });
  if (!r.ok()) return r.error();
  return r->value_or(0);
}

}  // namespace hubwatch::store
