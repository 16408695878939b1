// The store's hot queries use indexes (issue 33: 100,000 repos on one box). What an unchanged
// poll, the change-hint listing and a reload run once per repo must find their rows by a key,
// never walk the repos table. The statements are the store's own: each test runs the store's
// calls, collects the SQL they prepared on the connection (sqlite3_next_stmt) and asks SQLite
// for each one's plan (EXPLAIN QUERY PLAN).

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tests/store/store_fixtures.h"

namespace hubwatch::store {
namespace {

// The SQL text of every statement prepared on `db` now.
std::set<std::string> Prepared(sqlite3* db) {
  std::set<std::string> out;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    out.insert(sqlite3_sql(s));
  }
  return out;
}

// The statements `work` prepared on `store`'s connection (new in its statement cache).
std::vector<std::string> StatementsOf(Store& store, const std::function<void()>& work) {
  const std::set<std::string> before = Prepared(store.db().handle());
  work();
  std::vector<std::string> out;
  for (const std::string& sql : Prepared(store.db().handle())) {
    if (!before.count(sql)) out.push_back(sql);
  }
  return out;
}

// EXPLAIN QUERY PLAN's detail lines for `sql` (parameters unbound: the plan does not use them).
std::vector<std::string> PlanOf(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* q = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, ("EXPLAIN QUERY PLAN " + sql).c_str(), -1, &q, nullptr),
            SQLITE_OK)
      << sql;
  std::vector<std::string> details;
  while (q && sqlite3_step(q) == SQLITE_ROW) {
    details.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(q, 3)));
  }
  sqlite3_finalize(q);
  return details;
}

// Every step of every statement is a keyed search (SCAN of a table is a walk of all its rows).
void ExpectKeyedOnly(Store& store, const std::vector<std::string>& statements) {
  ASSERT_FALSE(statements.empty());
  for (const std::string& sql : statements) {
    for (const std::string& step : PlanOf(store.db().handle(), sql)) {
      EXPECT_EQ(step.rfind("SCAN", 0), std::string::npos) << sql << "\n  plan: " << step;
      if (step.rfind("SEARCH", 0) == 0) {
        EXPECT_NE(step.find(" USING "), std::string::npos) << sql << "\n  plan: " << step;
      }
    }
  }
}

class QueryPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(db_.path());
    ASSERT_TRUE(store_);
    for (int i = 0; i < 50; ++i) {
      RepoRecord r;
      r.id = "owner-" + std::to_string(i % 7) + "/model-" + std::to_string(i);
      r.refs = {"main"};
      r.added_at = 1700000000;
      ASSERT_TRUE(store_->repos().AddRepo(r).ok());
      ASSERT_TRUE(store_->repos().SetRefHead(r.id, "main", std::string(40, 'a'), 1).ok());
    }
    RevisionIngest in = SampleIngest("sha-1", "");
    ASSERT_TRUE(store_->repos().AddRepo({.id = in.revision.repo, .refs = {"main"}}).ok());
    ASSERT_TRUE(store_->revisions().Ingest(in).ok());
  }

  TempDb db_;
  std::unique_ptr<Store> store_;
  const std::string repo_ = "owner-3/model-10";
};

TEST_F(QueryPlan, AnUnchangedPollFindsItsRowsByKey) {
  // Poller: the repo, its ETag, its ref cursor; then what the poll found and its next time.
  std::vector<std::string> sql = StatementsOf(*store_, [&] {
    Result<std::optional<RepoRecord>> r = store_->repos().GetRepo(repo_);
    ASSERT_TRUE(r.ok() && *r);
    (void)store_->http_cache().Get("http://127.0.0.1/api/models/" + repo_ + "/refs");
    ASSERT_TRUE(store_->repos().GetRefHead(repo_, "main").ok());
    ASSERT_TRUE(store_->repos().UpdateRepoPoll(**r).ok());
    ASSERT_TRUE(store_->repos().SetNextPoll(repo_, 1700003600).ok());
    ASSERT_TRUE(store_->http_cache().Put("http://127.0.0.1/x", {"\"e\"", "", "[]"}, 1).ok());
  });
  EXPECT_GE(sql.size(), 5u);
  ExpectKeyedOnly(*store_, sql);
}

TEST_F(QueryPlan, AListingHintAndAMovedHeadFindTheirRowsByKey) {
  // The listing compares a listed sha with the stored head; a moved head is looked up.
  std::vector<std::string> sql = StatementsOf(*store_, [&] {
    ASSERT_TRUE(store_->repos().GetRefHead(repo_, "main").ok());
    ASSERT_TRUE(store_->revisions().HasRevision(repo_, std::string(40, 'b')).ok());
    ASSERT_TRUE(store_->repos().SetRefHead(repo_, "main", std::string(40, 'b'), 2).ok());
    ASSERT_TRUE(store_->repos().SetListingWatermark("hub", 1700000000, 2).ok());
  });
  ExpectKeyedOnly(*store_, sql);
}

TEST_F(QueryPlan, ARepoPageReadsOnlyThatRepo) {
  // What a model page and the repo's API read about one repo.
  const std::string gemma = "google/gemma-2-9b-it";
  std::vector<std::string> sql = StatementsOf(*store_, [&] {
    ASSERT_TRUE(store_->revisions().LatestRevision(gemma).ok());
    ASSERT_TRUE(store_->revisions().LatestEstimate(gemma).ok());
    ASSERT_TRUE(store_->revisions().ListRevisions(gemma, 100).ok());
    Query q;
    q.repo = gemma;
    ASSERT_TRUE(store_->revisions().ListChanges(q).ok());
  });
  for (const std::string& s : sql) {
    for (const std::string& step : PlanOf(store_->db().handle(), s)) {
      EXPECT_EQ(step.find("SCAN repos"), std::string::npos) << s << "\n  plan: " << step;
      EXPECT_EQ(step.find("SCAN revisions"), std::string::npos) << s << "\n  plan: " << step;
      EXPECT_EQ(step.find("SCAN changes"), std::string::npos) << s << "\n  plan: " << step;
    }
  }
}

TEST_F(QueryPlan, ReRegisteringAnUnchangedRepoWritesNothing) {
  // A start or a reload registers every configured repo again (AddRepo): an unchanged one must
  // not be rewritten (at 100,000 repos that rewrote the whole table on every SIGHUP). Rows
  // written by one AddRepo, whatever its last statement was:
  sqlite3* db = store_->db().handle();
  auto rows_written = [&](const RepoRecord& repo) {
    const int before = sqlite3_total_changes(db);
    EXPECT_TRUE(store_->repos().AddRepo(repo).ok());
    return sqlite3_total_changes(db) - before;
  };
  EXPECT_EQ(rows_written({.id = repo_, .refs = {"main"}}), 0);
  EXPECT_EQ(rows_written({.id = repo_, .refs = {"main", "dev"}}), 1);
  Result<std::optional<RepoRecord>> r = store_->repos().GetRepo(repo_);
  ASSERT_TRUE(r.ok() && *r);
  EXPECT_EQ((*r)->refs, (std::vector<std::string>{"main", "dev"}));
  EXPECT_EQ(rows_written({.id = repo_, .refs = {"main", "dev"}, .source = Source::kConfig}), 1);
}

}  // namespace
}  // namespace hubwatch::store
