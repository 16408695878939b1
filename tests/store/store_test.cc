#include "tracker/store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>

#include "tests/store/store_fixtures.h"

namespace hubwatch::store {
namespace {

// Every row of every table, as text: two databases with the same dump hold the same data.
std::string Dump(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::string out;
  for (const char* table :
       {"repos", "ref_heads", "revisions", "manifests", "blobs", "safetensors_headers", "changes",
        "estimates", "advisories", "outbox"}) {
    out += std::string("# ") + table + "\n";
    sqlite3_exec(
        db, (std::string("SELECT * FROM ") + table + " ORDER BY 1, 2").c_str(),
        [](void* arg, int n, char** values, char**) {
          auto* s = static_cast<std::string*>(arg);
          for (int i = 0; i < n; ++i) *s += std::string(values[i] ? values[i] : "NULL") + "|";
          *s += "\n";
          return 0;
        },
        &out, nullptr);
  }
  sqlite3_close(db);
  return out;
}

TEST(Store, OpensAndMigrates) {
  TempDb db;
  { OpenOrDie(db.path()); }
  sqlite3* raw = nullptr;
  sqlite3_open(db.path().c_str(), &raw);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), Store::SchemaVersion());
  sqlite3_finalize(q);
  sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)), "wal");
  sqlite3_finalize(q);
  sqlite3_close(raw);
  // Reopening applies nothing twice.
  EXPECT_NE(OpenOrDie(db.path()), nullptr);
}

TEST(Store, RefusesADatabaseFromANewerHubwatch) {
  TempDb db;
  { OpenOrDie(db.path()); }
  sqlite3* raw = nullptr;
  sqlite3_open(db.path().c_str(), &raw);
  sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  Result<std::unique_ptr<Store>> s = Store::Open(db.path());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("schema version 99, newer than this hubwatch"),
            std::string::npos)
      << s.error().message;
}

TEST(Store, ReposRoundTripAndRemoveCascades) {
  auto store = OpenOrDie(":memory:");
  ASSERT_TRUE(
      store->repos().AddRepo({.id = "google/gemma-2-9b-it", .refs = {"main"}, .added_at = 5}).ok());
  ASSERT_TRUE(store->repos().AddRepo({.id = "google/gemma-2-9b-it", .refs = {"main", "v2"}}).ok());
  Result<std::optional<RepoRecord>> r = store->repos().GetRepo("google/gemma-2-9b-it");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->refs, (std::vector<std::string>{"main", "v2"}));
  EXPECT_EQ((*r)->added_at, 5);  // re-adding keeps the original row

  RepoRecord polled = **r;
  polled.state = RepoState::kRenamed;
  polled.renamed_to = "google/gemma-2-9b-instruct";
  polled.consecutive_errors = 2;
  ASSERT_TRUE(store->repos().UpdateRepoPoll(polled).ok());
  EXPECT_EQ((*store->repos().GetRepo("google/gemma-2-9b-it"))->state, RepoState::kRenamed);
  EXPECT_EQ((*store->repos().GetRepo("google/gemma-2-9b-it"))->renamed_to,
            "google/gemma-2-9b-instruct");

  ASSERT_EQ(*store->revisions().Ingest(SampleIngest("a1", "")), IngestOutcome::kIngested);
  ASSERT_TRUE(store->repos().RemoveRepo("google/gemma-2-9b-it").ok());
  EXPECT_FALSE(store->repos().GetRepo("google/gemma-2-9b-it")->has_value());
  EXPECT_TRUE(store->revisions().ListChanges({})->empty());
  EXPECT_TRUE(store->advisories().ListAdvisories({})->empty());
  EXPECT_FALSE(*store->revisions().HasRevision("google/gemma-2-9b-it", "a1"));
}

TEST(Store, IngestWritesEverythingAndIsIdempotent) {
  TempDb db;
  auto store = OpenOrDie(db.path());
  ASSERT_TRUE(store->repos().AddRepo({.id = "google/gemma-2-9b-it", .refs = {"main"}}).ok());
  ASSERT_EQ(*store->revisions().Ingest(SampleIngest("a1", "")), IngestOutcome::kIngested);
  ASSERT_EQ(*store->revisions().Ingest(SampleIngest("b2", "a1")), IngestOutcome::kIngested);

  EXPECT_EQ(**store->repos().GetRefHead("google/gemma-2-9b-it", "main"), "b2");
  const std::vector<RevisionRecord> revs =
      *store->revisions().ListRevisions("google/gemma-2-9b-it");
  ASSERT_EQ(revs.size(), 2u);
  EXPECT_EQ(revs[0].sha, "b2");  // newest first
  EXPECT_EQ(revs[0].parents, std::vector<std::string>{"a1"});
  EXPECT_EQ(revs[1].ingest_order, 1);
  EXPECT_EQ(store->revisions().ListRevisions("google/gemma-2-9b-it", 0, "b2")->size(), 1u);
  EXPECT_EQ(store->revisions().GetManifest("google/gemma-2-9b-it", "b2")->size(), 2u);
  EXPECT_EQ(**store->revisions().GetBlob("oid-config-b2"), "{\"model_type\": \"gemma2\"}");
  const SafetensorsHeader h = **store->revisions().GetHeader("sha-w1");
  EXPECT_EQ(h.tensors.at("model.norm.weight").shape, std::vector<int64_t>{3584});
  EXPECT_EQ(h.metadata.at("format"), "pt");
  EXPECT_EQ((*store->revisions().GetEstimate("google/gemma-2-9b-it", "a1"))->params_total,
            9241705984u);
  EXPECT_EQ((*store->revisions().LatestEstimate("google/gemma-2-9b-it"))->sha, "b2");
  const std::vector<AdvisoryRecord> advisories = *store->advisories().ListAdvisories({});
  ASSERT_EQ(advisories.size(), 2u);
  EXPECT_EQ(advisories[0].seq, 1);
  EXPECT_EQ(advisories[1].seq, 2);
  EXPECT_EQ(store->advisories().ListAdvisories({.after_seq = 1})->size(), 1u);
  EXPECT_EQ((*store->advisories().GetAdvisory("x_HUBWATCH-b2"))->kind, "config");
  const std::vector<ChangeRecord> changes =
      *store->revisions().ChangesOf("google/gemma-2-9b-it", "b2");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].change.summary, "rope_theta 10000 -> 500000");
  EXPECT_EQ(changes[0].change.impact, diff::Impact::kBehavioral);

  const std::string before = Dump(db.path());
  ASSERT_EQ(*store->revisions().Ingest(SampleIngest("b2", "a1")), IngestOutcome::kAlreadyPresent);
  EXPECT_EQ(Dump(db.path()), before);
}

TEST(Store, AFailedIngestLeavesNothingBehind) {
  auto store = OpenOrDie(":memory:");
  ASSERT_TRUE(store->repos().AddRepo({.id = "google/gemma-2-9b-it", .refs = {"main"}}).ok());
  RevisionIngest bad = SampleIngest("a1", "");
  bad.advisories[0].change_ordinal = 7;  // no such change: fails after most rows are written
  Result<IngestOutcome> r = store->revisions().Ingest(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(*store->revisions().HasRevision("google/gemma-2-9b-it", "a1"));
  EXPECT_FALSE(store->revisions().GetBlob("oid-config-a1")->has_value());
  EXPECT_FALSE(store->repos().GetRefHead("google/gemma-2-9b-it", "main")->has_value());
  EXPECT_TRUE(store->revisions().ListChanges({})->empty());
  EXPECT_EQ(*store->revisions().Ingest(SampleIngest("a1", "")), IngestOutcome::kIngested);
}

TEST(Store, DiskFullIsAnErrorAndLosesNothing) {
  TempDb db;
  {
    auto store = OpenOrDie(db.path());
    ASSERT_TRUE(store->repos().AddRepo({.id = "google/gemma-2-9b-it", .refs = {"main"}}).ok());
    ASSERT_EQ(*store->revisions().Ingest(SampleIngest("a1", "")), IngestOutcome::kIngested);
  }
  {
    auto full = OpenOrDie(db.path(), {.max_page_count = 40});
    RevisionIngest big = SampleIngest("b2", "a1");
    big.blobs.push_back({"oid-huge", std::string(1 << 20, 'x')});
    Result<IngestOutcome> r = full->revisions().Ingest(big);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("full"), std::string::npos) << r.error().message;
    EXPECT_FALSE(*full->revisions().HasRevision("google/gemma-2-9b-it", "b2"));
    EXPECT_TRUE(*full->revisions().HasRevision("google/gemma-2-9b-it", "a1"));
  }
  auto store = OpenOrDie(db.path());  // the fault ends: the same revision goes in
  RevisionIngest big = SampleIngest("b2", "a1");
  big.blobs.push_back({"oid-huge", std::string(1 << 20, 'x')});
  EXPECT_EQ(*store->revisions().Ingest(big), IngestOutcome::kIngested);
}

TEST(Store, LockedByAnotherWriterIsAnError) {
  TempDb db;
  auto store = OpenOrDie(db.path(), {.busy_timeout_ms = 50});
  ASSERT_TRUE(store->repos().AddRepo({.id = "google/gemma-2-9b-it", .refs = {"main"}}).ok());
  sqlite3* other = nullptr;
  sqlite3_open(db.path().c_str(), &other);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Result<IngestOutcome> r = store->revisions().Ingest(SampleIngest("a1", ""));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("locked by another process"), std::string::npos)
      << r.error().message;
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(*store->revisions().Ingest(SampleIngest("a1", "")), IngestOutcome::kIngested);
}

TEST(Store, HttpCache) {
  auto store = OpenOrDie(":memory:");
  EXPECT_FALSE(store->http_cache().Get("http://127.0.0.1/api/models/x")->has_value());
  ASSERT_TRUE(
      store->http_cache().Put("http://127.0.0.1/api/models/x", {"\"e1\"", "{}", "[]"}, 1).ok());
  ASSERT_TRUE(store->http_cache()
                  .Put("http://127.0.0.1/api/models/x",
                       {"\"e2\"", "{\"a\":1}", R"([["Content-Type","application/json"]])"}, 2)
                  .ok());
  const auto cached = **store->http_cache().Get("http://127.0.0.1/api/models/x");
  EXPECT_EQ(cached.etag, "\"e2\"");
  EXPECT_EQ(cached.body, "{\"a\":1}");
  EXPECT_EQ(cached.headers, R"([["Content-Type","application/json"]])");
}

}  // namespace
}  // namespace hubwatch::store
