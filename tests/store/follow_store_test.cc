// FollowStore: rules, the repos they bring (tracked from their head, untracked with their
// history kept), the claim of the configuration and the API on a repo, and the events.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>

#include "tests/store/store_fixtures.h"

namespace hubwatch::store {
namespace {

constexpr int64_t kNow = 1'800'000'000;
constexpr const char kRepo[] = "google/gemma-2-9b-it";  // SampleIngest's

class FollowStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = OpenOrDie(":memory:"); }
  FollowStore& follows() { return store_->follows(); }

  void PutRule(const std::string& name, Source source = Source::kApi) {
    ASSERT_TRUE(follows()
                    .PutRule({.name = name, .source = source, .spec = "{}", .created_at = kNow})
                    .ok());
  }
  std::vector<std::string> Track(const std::vector<std::string>& repos, const std::string& rule,
                                 int64_t at = kNow) {
    std::vector<FollowTrack> tracks;
    for (const std::string& r : repos) tracks.push_back({r, rule, {"main"}, true, "abc1234"});
    Result<std::vector<std::string>> t = follows().Track(tracks, at);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
    return t.ok() ? *t : std::vector<std::string>{};
  }
  std::vector<std::string> Scheduled() {
    std::vector<std::string> ids;
    const std::vector<RepoSchedule> schedules = *store_->repos().ListSchedules();
    for (const RepoSchedule& s : schedules) ids.push_back(s.id);
    return ids;
  }
  std::vector<std::string> EventKinds() {
    std::vector<std::string> kinds;
    const std::vector<FollowEvent> events = *follows().EventsAfter(0, 100);
    for (const FollowEvent& e : events) kinds.push_back(e.kind + " " + e.repo);
    return kinds;
  }

  std::unique_ptr<Store> store_;
};

TEST_F(FollowStoreTest, ARuleBringsReposFromTheirHeadsAndCountsThem) {
  PutRule("Qwen");
  EXPECT_EQ(Track({"Qwen/a", "Qwen/b"}, "Qwen"), (std::vector<std::string>{"Qwen/a", "Qwen/b"}));
  std::optional<RepoRecord> a = *store_->repos().GetRepo("Qwen/a");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->tracked);
  EXPECT_TRUE(a->baseline);
  EXPECT_EQ(a->followed_by, "Qwen");
  EXPECT_EQ(a->source, Source::kApi);
  EXPECT_EQ(a->next_poll_at, kNow);  // due at once
  std::vector<FollowRuleRecord> rules = *follows().ListRules();
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].tracked, 2);
  EXPECT_EQ(rules[0].untracked, 0);
  std::vector<FollowEvent> events = *follows().EventsAfter(0, 10);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "tracked");
  EXPECT_EQ(events[0].rule, "Qwen");
  EXPECT_EQ(events[0].sha, "abc1234");
  EXPECT_LT(events[0].seq, events[1].seq);
  EXPECT_EQ(*follows().LastEventSeq(), events[1].seq);
}

TEST_F(FollowStoreTest, ARepoTrackedAlreadyIsNotBroughtAgain) {
  ASSERT_TRUE(store_->repos().AddRepo({.id = "Qwen/named", .refs = {"main"}}).ok());
  PutRule("Qwen");
  EXPECT_EQ(Track({"Qwen/named", "Qwen/new"}, "Qwen"), std::vector<std::string>{"Qwen/new"});
  EXPECT_EQ(Track({"Qwen/new"}, "Qwen"), std::vector<std::string>{});  // no second event
  EXPECT_EQ(EventKinds(), std::vector<std::string>{"tracked Qwen/new"});
  EXPECT_FALSE((*store_->repos().GetRepo("Qwen/named"))->followed_by);
}

TEST_F(FollowStoreTest, UntrackingKeepsTheHistoryAndStopsTheSchedule) {
  PutRule("google");
  Track({kRepo}, "google");
  ASSERT_TRUE(store_->revisions().Ingest(SampleIngest("a1", "")).ok());
  ASSERT_TRUE(follows().Untrack({kRepo}, "below the threshold", kNow + 60).ok());
  std::optional<RepoRecord> r = *store_->repos().GetRepo(kRepo);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->tracked);
  EXPECT_EQ(store_->revisions().ListRevisions(kRepo)->size(), 1u);  // kept
  EXPECT_TRUE(Scheduled().empty());
  EXPECT_EQ((*follows().ListRules())[0].untracked, 1);
  std::vector<FollowEvent> events = *follows().LatestEvents(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "untracked");
  EXPECT_EQ(events[0].reason, "below the threshold");
  // Untracking again says nothing more; tracking again brings it back, its history intact.
  ASSERT_TRUE(follows().Untrack({kRepo}, "again", kNow + 61).ok());
  EXPECT_EQ(EventKinds().size(), 2u);
  EXPECT_EQ(Track({kRepo}, "google", kNow + 120), std::vector<std::string>{kRepo});
  EXPECT_EQ(Scheduled(), std::vector<std::string>{kRepo});
  EXPECT_EQ(store_->revisions().ListRevisions(kRepo)->size(), 1u);
}

TEST_F(FollowStoreTest, TheConfigurationOrTheApiNamingARepoTakesItFromItsRule) {
  PutRule("Qwen");
  Track({"Qwen/a"}, "Qwen");
  ASSERT_TRUE(
      store_->repos().AddRepo({.id = "Qwen/a", .refs = {"main"}, .source = Source::kConfig}).ok());
  EXPECT_FALSE((*store_->repos().GetRepo("Qwen/a"))->followed_by);
  ASSERT_TRUE(follows().Untrack({"Qwen/a"}, "gone", kNow).ok());  // not the rule's any more
  EXPECT_TRUE((*store_->repos().GetRepo("Qwen/a"))->tracked);
  EXPECT_EQ((*follows().ListRules())[0].tracked, 0);
}

TEST_F(FollowStoreTest, ARuleUnmatchedForAWindowIsFoundAndRemovingARuleUntracksItsRepos) {
  PutRule("Qwen");
  Track({"Qwen/a", "Qwen/b"}, "Qwen", kNow);
  ASSERT_TRUE(follows().Matched("Qwen", {"Qwen/a"}, kNow + 3600).ok());
  EXPECT_EQ(*follows().UnmatchedSince("Qwen", kNow), std::vector<std::string>{"Qwen/b"});
  EXPECT_TRUE(follows().UnmatchedSince("Qwen", kNow - 1)->empty());
  Result<std::vector<std::string>> untracked = follows().RemoveRule("Qwen", kNow + 7200);
  ASSERT_TRUE(untracked.ok());
  EXPECT_EQ(*untracked, (std::vector<std::string>{"Qwen/a", "Qwen/b"}));
  EXPECT_TRUE(follows().ListRules()->empty());
  EXPECT_TRUE(Scheduled().empty());
  EXPECT_TRUE((*store_->repos().GetRepo("Qwen/a")).has_value());  // kept, untracked
}

TEST_F(FollowStoreTest, ARuleNameBelongsToTheSourceThatMadeIt) {
  PutRule("Qwen", Source::kConfig);
  Status s = follows().PutRule({.name = "Qwen", .source = Source::kApi, .spec = "{}"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidInput);
  // The same source replaces its spec; a changed spec is walked again.
  ASSERT_TRUE(follows().SetWalked("Qwen", kNow).ok());
  PutRule("Qwen", Source::kConfig);
  EXPECT_EQ((*follows().GetRule("Qwen"))->walked_at, kNow);
  ASSERT_TRUE(follows()
                  .PutRule({.name = "Qwen", .source = Source::kConfig, .spec = "{\"match\":\"x\"}"})
                  .ok());
  EXPECT_EQ((*follows().GetRule("Qwen"))->walked_at, 0);
}

TEST_F(FollowStoreTest, ARepoIsOneRepoInAnyLetterCase) {
  // The Hub resolves ids without regard to letter case: Qwen/Model and qwen/model are one repo.
  PutRule("Qwen");
  EXPECT_EQ(Track({"Qwen/Model"}, "Qwen"), std::vector<std::string>{"Qwen/Model"});
  EXPECT_EQ(Track({"qwen/model", "QWEN/MODEL"}, "Qwen"), std::vector<std::string>{});
  EXPECT_FALSE((*store_->repos().GetRepo("qwen/model")).has_value());
  EXPECT_EQ(EventKinds(), std::vector<std::string>{"tracked Qwen/Model"});
  // A walk that lists it in other letters shows it.
  ASSERT_TRUE(follows().Matched("Qwen", {"qwen/MODEL"}, kNow + 3600).ok());
  EXPECT_TRUE(follows().UnmatchedSince("Qwen", kNow)->empty());
  // Untracked, then listed in other letters: tracked again under the id it has, history and all.
  ASSERT_TRUE(follows().Untrack({"Qwen/Model"}, "gone", kNow + 7200).ok());
  EXPECT_EQ(Track({"qwen/model"}, "Qwen", kNow + 7300), std::vector<std::string>{"Qwen/Model"});
  EXPECT_EQ(store_->repos().ListRepos()->size(), 1u);
  // A repo the configuration names in its own letters is not tracked again by a rule.
  ASSERT_TRUE(store_->repos().AddRepo({.id = "acme/Named", .refs = {"main"}}).ok());
  EXPECT_EQ(Track({"ACME/named"}, "Qwen"), std::vector<std::string>{});
  EXPECT_EQ(*follows().TrackedIgnoringCase("ACME/NAMED"), "acme/Named");
  EXPECT_EQ(*follows().TrackedIgnoringCase("qwen/model"), "Qwen/Model");
  EXPECT_FALSE(follows().TrackedIgnoringCase("qwen/other")->has_value());
}

TEST_F(FollowStoreTest, ARepoIsUnmatchedOnceTwoCompleteWalksInARowMissedIt) {
  PutRule("Qwen");
  Track({"Qwen/a", "Qwen/b"}, "Qwen", kNow);
  auto walk = [&](std::vector<std::string> shown, int64_t at) {
    ASSERT_TRUE(follows().Matched("Qwen", shown, at).ok());
    ASSERT_TRUE(follows().Missed("Qwen", at).ok());
  };
  walk({"Qwen/a"}, kNow + 3600);  // one walk misses b
  EXPECT_TRUE(follows().UnmatchedSince("Qwen", kNow, 2)->empty());
  EXPECT_EQ(*follows().UnmatchedSince("Qwen", kNow, 1), std::vector<std::string>{"Qwen/b"});
  walk({"Qwen/a", "qwen/B"}, kNow + 7200);  // the next shows it again: its misses start over
  walk({"Qwen/a"}, kNow + 10800);
  EXPECT_TRUE(follows().UnmatchedSince("Qwen", kNow + 7200, 2)->empty());
  walk({"Qwen/a"}, kNow + 14400);  // two in a row
  EXPECT_EQ(*follows().UnmatchedSince("Qwen", kNow + 7200, 2), std::vector<std::string>{"Qwen/b"});
  EXPECT_TRUE(follows().UnmatchedSince("Qwen", kNow + 7199, 2)->empty());  // within the window
  // Tracked again, it starts over.
  ASSERT_TRUE(follows().Untrack({"Qwen/b"}, "gone", kNow + 14400).ok());
  Track({"Qwen/b"}, "Qwen", kNow + 15000);
  walk({"Qwen/a"}, kNow + 18000);
  EXPECT_TRUE(follows().UnmatchedSince("Qwen", kNow + 18000, 2)->empty());
}

TEST_F(FollowStoreTest, LettersIgnoredTheFollowStatementsStillFindTheirRowsByAKey) {
  // At 100,000 repos a walk's lookups must not walk the repos table once per listed repo.
  PutRule("Qwen");
  std::set<std::string> before;
  sqlite3* db = store_->db().handle();
  for (sqlite3_stmt* q = sqlite3_next_stmt(db, nullptr); q; q = sqlite3_next_stmt(db, q)) {
    before.insert(sqlite3_sql(q));
  }
  Track({"Qwen/a"}, "Qwen");
  ASSERT_TRUE(follows().Matched("Qwen", {"qwen/A"}, kNow).ok());
  ASSERT_TRUE(follows().Missed("Qwen", kNow).ok());
  ASSERT_TRUE(follows().UnmatchedSince("Qwen", kNow, 2).ok());
  ASSERT_TRUE(follows().TrackedIgnoringCase("qwen/A").ok());
  int checked = 0;
  for (sqlite3_stmt* q = sqlite3_next_stmt(db, nullptr); q; q = sqlite3_next_stmt(db, q)) {
    const std::string sql = sqlite3_sql(q);
    if (before.count(sql)) continue;
    sqlite3_stmt* plan = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, ("EXPLAIN QUERY PLAN " + sql).c_str(), -1, &plan, nullptr),
              SQLITE_OK);
    while (sqlite3_step(plan) == SQLITE_ROW) {
      const std::string step = reinterpret_cast<const char*>(sqlite3_column_text(plan, 3));
      EXPECT_NE(step.rfind("SCAN", 0), 0u) << sql << "\n  plan: " << step;
      // A search by the rule alone would read every repo of the rule once per listed repo.
      if (sql.find("NOCASE") != std::string::npos && step.find(" follows ") != step.npos) {
        EXPECT_NE(step.find("(repo=?)"), std::string::npos) << sql << "\n  plan: " << step;
      }
    }
    sqlite3_finalize(plan);
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

}  // namespace
}  // namespace hubwatch::store
