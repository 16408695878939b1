// Database: transactions (Batch, Atomically, savepoints) and refusing a newer schema.

#include "tracker/store/database.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/store/store_fixtures.h"

namespace hubwatch::store {
namespace {

bool HasRepo(Store& store, const std::string& id) {
  Result<std::optional<RepoRecord>> r = store.repos().GetRepo(id);
  EXPECT_TRUE(r.ok());
  return r.ok() && r->has_value();
}

TEST(Database, AFailedBatchCommitKeepsNothingTheBodyWrote) {
  std::unique_ptr<Store> store = OpenOrDie(":memory:");
  ASSERT_NE(store, nullptr);
  Status s = store->Batch([&] {
    // Foreign keys checked at COMMIT: the dangling ref cursor makes the commit fail.
    ASSERT_TRUE(store->db().Exec("PRAGMA defer_foreign_keys=ON", "test").ok());
    ASSERT_TRUE(store->repos().AddRepo({.id = "org/kept-not"}).ok());
    ASSERT_TRUE(store->repos().SetRefHead("org/missing", "main", "a1", 1).ok());
    EXPECT_TRUE(store->InTransaction());
  });
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(store->InTransaction());
  EXPECT_FALSE(HasRepo(*store, "org/kept-not"));
  EXPECT_FALSE(store->repos().GetRefHead("org/missing", "main")->has_value());
}

TEST(Database, AtomicallyInsideABatchIsASavepoint) {
  std::unique_ptr<Store> store = OpenOrDie(":memory:");
  ASSERT_NE(store, nullptr);
  Status failed = Status::Ok();
  Status s = store->Batch([&] {
    ASSERT_TRUE(store->Atomically([&] { return store->repos().AddRepo({.id = "org/a"}); }).ok());
    failed = store->Atomically([&]() -> Status {
      if (Status w = store->repos().AddRepo({.id = "org/b"}); !w.ok()) return w;
      return Error::Io("a step failed");
    });
    EXPECT_TRUE(store->InTransaction());  // the batch goes on
    ASSERT_TRUE(store->repos().AddRepo({.id = "org/c"}).ok());
  });
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(failed.ok());
  EXPECT_TRUE(HasRepo(*store, "org/a"));
  EXPECT_FALSE(HasRepo(*store, "org/b"));  // only the failed savepoint was undone
  EXPECT_TRUE(HasRepo(*store, "org/c"));
}

TEST(Database, AFailedAtomicallyOutsideABatchRollsBackEverything) {
  std::unique_ptr<Store> store = OpenOrDie(":memory:");
  ASSERT_NE(store, nullptr);
  Status s = store->Atomically([&]() -> Status {
    if (Status w = store->repos().AddRepo({.id = "org/a"}); !w.ok()) return w;
    return Error::Io("no");
  });
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(store->InTransaction());
  EXPECT_FALSE(HasRepo(*store, "org/a"));
}

TEST(Database, RefusesANewerSchemaVersionAndOpensItsOwn) {
  TempDb db;
  {
    Result<std::unique_ptr<Database>> opened = Database::Open(db.path());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
  }
  {
    Result<std::unique_ptr<Database>> again = Database::Open(db.path());
    ASSERT_TRUE(again.ok());
    const std::string bump = "PRAGMA user_version=" + std::to_string(Database::SchemaVersion() + 1);
    ASSERT_TRUE((*again)->Exec(bump.c_str(), "test").ok());
  }
  Result<std::unique_ptr<Database>> newer = Database::Open(db.path());
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.error().message.find("newer than this hubwatch understands"), std::string::npos)
      << newer.error().message;
  EXPECT_FALSE(Store::Open(db.path()).ok());
}

TEST(Database, ThePreparedStatementCacheReusesOneStatementPerText) {
  Result<std::unique_ptr<Database>> db = Database::Open(":memory:");
  ASSERT_TRUE(db.ok());
  static const char kSql[] = "SELECT 1";
  Result<sqlite3_stmt*> a = (*db)->Prepare(kSql);
  Result<sqlite3_stmt*> b = (*db)->Prepare(kSql);
  const std::string other = "SELECT 2";
  Result<sqlite3_stmt*> c = (*db)->Prepare(other);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_FALSE((*db)->Prepare("SELEC nonsense").ok());
}

int64_t CacheSize(Database& db) {
  Result<sqlite3_stmt*> q = db.Prepare("PRAGMA cache_size");
  EXPECT_TRUE(q.ok());
  if (!q.ok() || sqlite3_step(*q) != SQLITE_ROW) return 0;
  const int64_t size = sqlite3_column_int64(*q, 0);
  sqlite3_reset(*q);
  return size;
}

TEST(Database, ThePageCacheIsSqlitesDefaultUnlessTheOptionsCapIt) {
  Result<std::unique_ptr<Database>> plain = Database::Open(":memory:");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(CacheSize(**plain), -2000);  // KiB
  Result<std::unique_ptr<Database>> capped = Database::Open(":memory:", {.cache_kib = 512});
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(CacheSize(**capped), -512);
}

}  // namespace
}  // namespace hubwatch::store
