// RepoPages and ChangePages (the lists a page at a time) and what RevisionWriter keeps for them
// (repos.family, repos.last_change_at, changes.committed_at): the plans of the hot queries read
// an index, the filters, and cursors that visit every row exactly once while rows are added.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/store/bulk_repos.h"
#include "tests/store/store_fixtures.h"
#include "tracker/store/store.h"

namespace hubwatch::store {
namespace {

using testing::BulkId;
using testing::BulkRevision;
using testing::FillRepos;
using testing::kBulkEpoch;

class PagedListsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(":memory:");
    ASSERT_NE(store_, nullptr);
  }
  RepoPages& pages() { return store_->repo_pages(); }

  std::vector<std::string> Ids(const RepoSearch& search) {
    Result<std::vector<RepoKey>> keys = pages().Find(search);
    EXPECT_TRUE(keys.ok()) << keys.error().message;
    std::vector<std::string> out;
    if (keys.ok()) {
      for (const RepoKey& k : *keys) out.push_back(k.id);
    }
    return out;
  }

  std::unique_ptr<Store> store_;
};

// EXPLAIN QUERY PLAN of `sql`: one detail line per step.
std::vector<std::string> Plan(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, ("EXPLAIN QUERY PLAN " + sql).c_str(), -1, &stmt, nullptr),
            SQLITE_OK)
      << sql;
  std::vector<std::string> out;
  while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3)));
  }
  sqlite3_finalize(stmt);
  return out;
}

TEST_F(PagedListsTest, EveryQueryOfThePagesReadsAnIndex) {
  FillRepos(*store_, 0, 50, true);
  // Every query the pages run: each filter of the search alone and together, both directions,
  // the families, the change pages with and without a repo and "since", and the readers of a
  // page's rows. Each is prepared (and so kept) on this connection.
  ASSERT_TRUE(pages().Families("", 301).ok());
  ASSERT_TRUE(pages().Count().ok());
  for (unsigned f = 0; f < 32; ++f) {
    for (const bool backward : {false, true}) {
      RepoSearch s{.name = f & 1 ? "model" : "",
                   .owner = f & 2 ? "bulk-01" : "",
                   .family = f & 4 ? "fam-1" : "",
                   .state = f & 8 ? "ok" : "",
                   .changed_since = f & 16 ? kBulkEpoch + 10 : 0,
                   .after = "",
                   .before = backward ? "zzz" : "",
                   .limit = 101};
      ASSERT_TRUE(pages().Find(s).ok());
    }
  }
  for (const std::string& repo : {std::string(), BulkId(3)}) {
    ASSERT_TRUE(store_->change_pages().Newest({.repo = repo, .committed_since = 5}).ok());
    ASSERT_TRUE(store_->change_pages().Newest({.repo = repo, .before = {kBulkEpoch + 20, 9}}).ok());
  }
  ASSERT_TRUE(store_->change_pages().OfRepo({.repo = BulkId(3), .limit = 10}, 0).ok());
  ASSERT_TRUE(store_->repos().GetRepo(BulkId(3)).ok());
  ASSERT_TRUE(store_->revisions().LatestEstimate(BulkId(3)).ok());
  ASSERT_TRUE(store_->revisions().BrowseChanges({.repo = BulkId(3), .limit = 1}).ok());
  ASSERT_TRUE(store_->revisions().GetChange(1).ok());

  // The statements this connection prepared, less the writers': none scans repos, changes or
  // revisions without an index.
  sqlite3* db = store_->db().handle();
  int checked = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    const std::string sql = sqlite3_sql(s);
    if (!sql.starts_with("SELECT")) continue;
    ++checked;
    for (const std::string& step : Plan(db, sql)) {
      // repo_families holds one row per family: its count is read whole.
      if (step.starts_with("SCAN ") && step != "SCAN CONSTANT ROW" &&
          step != "SCAN repo_families") {
        EXPECT_NE(step.find(" INDEX "), std::string::npos) << step << "\n  in: " << sql;
      }
    }
  }
  EXPECT_GE(checked, 64 + 8);
  // The two that matter most at 100,000 repos, by name.
  const std::vector<std::string> family =
      Plan(db,
           "SELECT id, family, COALESCE(last_change_at, 0) FROM repos WHERE id > ?7 AND family = "
           "?4 ORDER BY id LIMIT ?8");
  ASSERT_EQ(family.size(), 1u);
  EXPECT_NE(family[0].find("USING INDEX repos_by_family (family=? AND id>?)"), std::string::npos)
      << family[0];
}

TEST_F(PagedListsTest, TheWriterKeepsTheFamilyAndTheLastChange) {
  ASSERT_TRUE(store_->repos().AddRepo({.id = "org/m", .refs = {"main"}, .added_at = 1}).ok());
  auto family = [&] {
    Result<std::vector<RepoKey>> k = pages().Find({.owner = "org", .limit = 5});
    EXPECT_TRUE(k.ok() && k->size() == 1u);
    return k.ok() && !k->empty() ? k->front() : RepoKey{};
  };
  EXPECT_EQ(family().family, "unknown");
  EXPECT_EQ(family().last_change_at, 0);
  RevisionIngest first = BulkRevision("org/m", 1, 1'700'000'000, "llama");
  first.revision.authored_at = "2024-06-01T00:00:00Z";  // the commit time wins
  ASSERT_TRUE(store_->revisions().Ingest(first).ok());
  EXPECT_EQ(family().family, "llama");
  EXPECT_EQ(family().last_change_at, 1717200000);
  // A checkpoint without model_type; a newer revision without an estimate keeps the older one's.
  RevisionIngest second = BulkRevision("org/m", 2, 1'700'000'100, "");
  second.estimate = first.estimate;
  second.estimate->sha = second.revision.sha;
  second.estimate->estimate["model"]["model_type"] = "";
  ASSERT_TRUE(store_->revisions().Ingest(second).ok());
  EXPECT_EQ(family().family, "no model_type");
  EXPECT_EQ(family().last_change_at, 1717200000);  // the newest commit, not the newest ingest
  RevisionIngest third = BulkRevision("org/m", 3, 1'800'000'000, "");
  third.changes.clear();
  ASSERT_TRUE(store_->revisions().Ingest(third).ok());
  EXPECT_EQ(family().family, "no model_type");
  EXPECT_EQ(family().last_change_at, 1717200000);  // no change in it
  // The unavailable form: no figures, no family.
  RevisionIngest fourth = BulkRevision("org/m", 4, 1'800'000'100, "");
  fourth.estimate = EstimateRecord::Unavailable("org/m", fourth.revision.sha, "not modelled");
  ASSERT_TRUE(store_->revisions().Ingest(fourth).ok());
  EXPECT_EQ(family().family, "unknown");
  EXPECT_EQ(family().last_change_at, 1'800'000'100);
  // The family counts follow: one repo, now "unknown"; none once it is removed.
  auto families = [&] {
    std::map<std::string, int64_t> out;
    const Result<std::vector<FamilyCount>> listed = pages().Families("", 100);
    EXPECT_TRUE(listed.ok());
    for (const FamilyCount& f : listed.ok() ? *listed : std::vector<FamilyCount>{}) {
      out[f.family] = f.repos;
    }
    return out;
  };
  EXPECT_EQ(families(), (std::map<std::string, int64_t>{{"unknown", 1}}));
  ASSERT_TRUE(store_->repos().AddRepo({.id = "org/n", .refs = {"main"}, .added_at = 1}).ok());
  ASSERT_TRUE(store_->revisions().Ingest(BulkRevision("org/n", 9, 1'700'000'000, "qwen2")).ok());
  ASSERT_TRUE(store_->repos().AddRepo({.id = "org/n", .refs = {"v2"}, .added_at = 1}).ok());
  EXPECT_EQ(families(), (std::map<std::string, int64_t>{{"qwen2", 1}, {"unknown", 1}}));
  EXPECT_EQ(*pages().Count(), 2);
  auto change = store_->change_pages().Newest({.repo = "org/m", .limit = 10});
  ASSERT_TRUE(change.ok());
  ASSERT_EQ(change->size(), 3u);
  EXPECT_EQ((*change)[0].committed_at, 1'800'000'100);
  EXPECT_EQ((*change)[1].committed_at, 1717200000);
  EXPECT_EQ((*change)[2].committed_at, 1'700'000'100);
  ASSERT_TRUE(store_->repos().RemoveRepo("org/m").ok());
  EXPECT_EQ(families(), (std::map<std::string, int64_t>{{"qwen2", 1}}));
  EXPECT_EQ(*pages().Count(), 1);
}

TEST_F(PagedListsTest, FiltersFindWhatTheyNameAndNothingElse) {
  FillRepos(*store_, 0, 200, true);
  for (const char* id : {"bulk-01x/other", "bulk-0/other", "Bulk-01/UPPER"}) {
    ASSERT_TRUE(store_->repos().AddRepo({.id = id, .refs = {"main"}, .added_at = 1}).ok());
  }
  const std::vector<std::string> owner = Ids({.owner = "bulk-01", .limit = 1000});
  EXPECT_EQ(owner.size(), 20u);
  for (const std::string& id : owner) EXPECT_TRUE(id.starts_with("bulk-01/")) << id;
  EXPECT_EQ(Ids({.name = "upper", .limit = 10}), std::vector<std::string>{"Bulk-01/UPPER"});
  EXPECT_EQ(
      Ids({.name = "MODEL-00019", .limit = 10}),
      (std::vector<std::string>{BulkId(190), BulkId(191), BulkId(192), BulkId(193), BulkId(194),
                                BulkId(195), BulkId(196), BulkId(197), BulkId(198), BulkId(199)}));
  EXPECT_EQ(Ids({.family = "fam-3", .limit = 1000}).size(), 29u);  // 3, 10, ..., 199
  EXPECT_EQ(Ids({.family = "unknown", .limit = 1000}).size(), 3u);
  EXPECT_EQ(Ids({.changed_since = kBulkEpoch + 190, .limit = 1000}).size(), 10u);
  EXPECT_EQ(Ids({.state = "gated", .limit = 1000}).size(), 0u);
  EXPECT_EQ(Ids({.owner = "bulk-02", .family = "fam-2", .limit = 1000}).size(), 3u);  // 2, 72, 142
  Result<std::vector<FamilyCount>> families = pages().Families("", 100);
  ASSERT_TRUE(families.ok());
  ASSERT_EQ(families->size(), 8u);  // fam-0 .. fam-6, unknown
  EXPECT_EQ((*families)[0].family, "fam-0");
  EXPECT_EQ((*families)[0].repos, 29);
  EXPECT_EQ(families->back().family, "unknown");
  EXPECT_EQ(pages().Families("fam-6", 100)->size(), 1u);
  EXPECT_EQ(*pages().Count(), 203);
  // Backward: the page before a cursor, still in ascending order.
  EXPECT_EQ(Ids({.owner = "bulk-01", .before = BulkId(41), .limit = 2}),
            (std::vector<std::string>{BulkId(21), BulkId(31)}));
}

// Walks every page forward, adding repos between pages (some sorting before the cursor, some
// after): every repo present at the start is seen exactly once, and so is every repo added
// after the cursor.
TEST_F(PagedListsTest, CursorsVisitEveryRepoOnceWhileReposAreAdded) {
  FillRepos(*store_, 0, 3000, false);
  std::map<std::string, int> seen;
  std::set<std::string> added_ahead;
  RepoSearch s{.limit = 100};
  int pages_read = 0, added = 3000;
  while (true) {
    const std::vector<std::string> ids = Ids(s);
    ASSERT_LE(ids.size(), 100u);
    if (ids.empty()) break;
    ++pages_read;
    for (const std::string& id : ids) ++seen[id];
    s.after = ids.back();
    if (!s.after.starts_with("bulk-")) continue;  // past the bulk: stop adding
    // One repo sorting before the cursor (never shown), one after it (shown on a later page).
    const std::string behind = "aaa/early-" + std::to_string(added);
    const std::string ahead = "zzz/late-" + std::to_string(added++);
    for (const std::string& id : {behind, ahead}) {
      ASSERT_TRUE(store_->repos().AddRepo({.id = id, .refs = {"main"}, .added_at = 1}).ok());
    }
    added_ahead.insert(ahead);
  }
  for (int i = 0; i < 3000; ++i) EXPECT_EQ(seen[BulkId(i)], 1) << BulkId(i);
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(added_ahead.size(), 30u);
  for (const std::string& id : added_ahead) EXPECT_EQ(seen.count(id), 1u) << id;
  EXPECT_FALSE(seen.contains("aaa/early-3000"));
  EXPECT_GE(pages_read, 30);
}

TEST_F(PagedListsTest, ChangeCursorsWalkNewestCommitFirstOnce) {
  FillRepos(*store_, 0, 500, true);
  std::set<int64_t> seen;
  ChangeSearch s{.committed_since = kBulkEpoch + 100, .limit = 50};
  ChangeKey last{0, INT64_MAX};
  int extra = 0;
  while (true) {
    Result<std::vector<ChangeKey>> keys = store_->change_pages().Newest(s);
    ASSERT_TRUE(keys.ok()) << keys.error().message;
    ASSERT_LE(keys->size(), 50u);
    if (keys->empty()) break;
    for (const ChangeKey& k : *keys) {
      EXPECT_TRUE(seen.insert(k.id).second) << k.id;
      EXPECT_GE(k.committed_at, kBulkEpoch + 100);
      EXPECT_TRUE(k.committed_at < last.committed_at ||
                  (k.committed_at == last.committed_at && k.id < last.id));
      last = k;
    }
    s.before = {keys->back().committed_at, keys->back().id};
    // A newer change arrives between pages: it sorts before the cursor, so this walk skips it.
    FillRepos(*store_, 10'000 + extra++, 1, true);
  }
  EXPECT_EQ(seen.size(), 400u);  // committed at kBulkEpoch + (100 .. 499)
  // A repo's changes by id, after a cursor.
  auto of = store_->change_pages().OfRepo({.repo = BulkId(7), .limit = 10}, 0);
  ASSERT_TRUE(of.ok());
  ASSERT_EQ(of->size(), 1u);
  EXPECT_TRUE(
      store_->change_pages().OfRepo({.repo = BulkId(7), .limit = 10}, of->front())->empty());
}

}  // namespace
}  // namespace hubwatch::store
