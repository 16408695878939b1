// A damaged stored row (JSON that does not parse, or does not hold what the store writes there)
// reads back as an error naming the row, never as an exception or a silent default. Each test
// damages one column with raw SQL through a second connection, as a bad disk or a hand edit
// would.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/store/store_fixtures.h"
#include "tracker/pipeline/store_etag_cache.h"

namespace hubwatch::store {
namespace {

constexpr char kRepo[] = "google/gemma-2-9b-it";

class DamagedRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(db_.path());
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->repos().AddRepo({.id = kRepo, .refs = {"main"}}).ok());
    ASSERT_TRUE(store_->revisions().Ingest(SampleIngest("a1", "")).ok());
  }

  // Runs `sql` on another connection to the same database.
  void Damage(const std::string& sql) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db_.path().c_str(), &raw), SQLITE_OK);
    char* message = nullptr;
    EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK)
        << (message ? message : "");
    EXPECT_EQ(sqlite3_changes(raw), 1) << sql;
    sqlite3_free(message);
    sqlite3_close(raw);
  }

  template <class T>
  static void ExpectDamaged(const Result<T>& r, const std::string& names) {
    ASSERT_FALSE(r.ok()) << "a damaged row read back as fine";
    EXPECT_EQ(r.error().code, ErrorCode::kIo);
    EXPECT_NE(r.error().message.find(names), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("is damaged"), std::string::npos) << r.error().message;
  }

  TempDb db_;
  std::unique_ptr<Store> store_;
};

TEST_F(DamagedRowsTest, ChangeDetails) {
  Damage("UPDATE changes SET details = '{\"ops\": [' WHERE sha = 'a1'");
  ExpectDamaged(store_->revisions().ChangesOf(kRepo, "a1"),
                "the details of change 1 (" + std::string(kRepo));
  ExpectDamaged(store_->revisions().ListChanges({}), "change 1");
}

// (The schema's CHECK constraints keep impacts and repo states to the known names.)
TEST_F(DamagedRowsTest, ChangeKind) {
  Damage("UPDATE changes SET kind = 'weather' WHERE sha = 'a1'");
  ExpectDamaged(store_->revisions().ChangesOf(kRepo, "a1"), "not a known kind");
}

TEST_F(DamagedRowsTest, RevisionLists) {
  Damage("UPDATE revisions SET authors = '\"osanseviero\"' WHERE sha = 'a1'");
  ExpectDamaged(store_->revisions().ListRevisions(kRepo),
                "the authors of revision " + std::string(kRepo));
  ExpectDamaged(store_->revisions().GetRevision(kRepo, "a1"), "the authors");
  ExpectDamaged(store_->revisions().LatestRevision(kRepo), "the authors");
  Damage("UPDATE revisions SET authors = '[]', parents = '[1]' WHERE sha = 'a1'");
  ExpectDamaged(store_->revisions().GetRevision(kRepo, "a1"), "the parents");
}

TEST_F(DamagedRowsTest, RepoRefs) {
  Damage("UPDATE repos SET refs = 'main' WHERE id = 'google/gemma-2-9b-it'");
  ExpectDamaged(store_->repos().GetRepo(kRepo), "the refs of repo " + std::string(kRepo));
  ExpectDamaged(store_->repos().ListRepos(), "the refs of repo");
}

TEST_F(DamagedRowsTest, AdvisoryRecord) {
  Damage("UPDATE advisories SET osv = 'x_HUBWATCH' WHERE id = 'x_HUBWATCH-a1'");
  ExpectDamaged(store_->advisories().ListAdvisories({}), "advisory x_HUBWATCH-a1");
  ExpectDamaged(store_->advisories().GetAdvisory("x_HUBWATCH-a1"), "advisory x_HUBWATCH-a1");
  Damage("UPDATE advisories SET osv = '[1]' WHERE id = 'x_HUBWATCH-a1'");
  ExpectDamaged(store_->advisories().RecentAdvisories({}), "not an object");
}

// A dtype, shape, metadata or size of the wrong type threw nlohmann::json::type_error out of
// GetHeader before; a negative or overflowing shape and a tensors array read as fine.
TEST_F(DamagedRowsTest, SafetensorsHeader) {
  for (const char* tensors :
       {R"({"tensors": {"w": [7, [3584], 0, 7168]}})",
        R"({"tensors": {"w": ["BF16", 3584, 0, 1]}})",
        R"({"tensors": {"w": ["BF16", [-1], 0, 1]}})",
        R"({"tensors": {"w": ["BF16", [4294967296, 4294967296], 0, 1]}})",
        R"({"tensors": {}, "metadata": {"format": 1}})", R"({"tensors": {}, "data_size": "big"})",
        R"({"tensors": []})", "not json"}) {
    Damage(std::string("UPDATE safetensors_headers SET tensors = '") + tensors +
           "' WHERE sha256 = 'sha-w1'");
    Result<std::optional<SafetensorsHeader>> h =
        Result<std::optional<SafetensorsHeader>>(Error::InvalidInput("threw"));
    EXPECT_NO_THROW(h = store_->revisions().GetHeader("sha-w1")) << tensors;
    ExpectDamaged(h, "safetensors header sha-w1");
  }
  Damage(
      R"(UPDATE safetensors_headers SET tensors = '{"tensors": {"w": ["BF16", [2, 3], 0, 12]}, "metadata": {"format": "pt"}, "data_size": 12}' WHERE sha256 = 'sha-w1')");
  Result<std::optional<SafetensorsHeader>> h = store_->revisions().GetHeader("sha-w1");
  ASSERT_TRUE(h.ok() && h->has_value()) << (h.ok() ? "" : h.error().message);
  EXPECT_EQ((*h)->tensors.at("w").elements, 6u);
  EXPECT_EQ((*h)->metadata.at("format"), "pt");
}

// Read as "no kinds", a damaged kinds column widened the subscription to every kind.
TEST_F(DamagedRowsTest, SubscriptionKinds) {
  Result<int64_t> id = store_->outbox().AddSubscription(
      {.url = "http://127.0.0.1:9/hook", .secret = "whsec_eA==", .kinds = {"chat_template"}});
  ASSERT_TRUE(id.ok());
  Damage("UPDATE subscriptions SET kinds = '[\"chat_template\"' WHERE id = " + std::to_string(*id));
  ExpectDamaged(store_->outbox().GetSubscription(*id),
                "the kinds of subscription " + std::to_string(*id));
  ExpectDamaged(store_->outbox().ListSubscriptions(), "the kinds of subscription");
}

// Read as "no targets", a damaged held row lost its webhook deliveries silently.
TEST_F(DamagedRowsTest, HeldAdvisoryTargets) {
  RevisionIngest held = SampleIngest("b2", "a1");
  held.settle_at = 1700000600;
  ASSERT_TRUE(store_->revisions().Ingest(held).ok());
  Damage("UPDATE held_advisories SET targets = 'subscription:1' WHERE id = 'x_HUBWATCH-b2'");
  ExpectDamaged(store_->advisories().PublishSettled(kRepo, 1700000601),
                "the delivery targets of held advisory x_HUBWATCH-b2");
  EXPECT_TRUE(*store_->advisories().HasHeldAdvisories(kRepo));  // nothing half-published
}

// A damaged headers column is a cache miss (the full response rewrites it), not a cached body
// served with some of its headers missing.
TEST_F(DamagedRowsTest, HttpCacheHeadersAreAMiss) {
  const std::string url = "http://127.0.0.1/api/models/x";
  const ManualClock clock(1);
  pipeline::StoreEtagCache cache(*store_, clock);
  hub::CachedResponse response{"\"e1\"", "{}", {}};
  response.headers.Add("X-Repo-Commit", "a1");
  cache.Store(url, response);
  ASSERT_TRUE(cache.Lookup(url).has_value());
  EXPECT_EQ(cache.Lookup(url)->etag, "\"e1\"");
  for (const char* headers : {"[[\"X-Repo-Commit\", \"a1\"]", "{\"X-Repo-Commit\": \"a1\"}",
                              "[[\"X-Repo-Commit\", 1]]", "[[\"X-Repo-Commit\"]]"}) {
    Damage("UPDATE http_cache SET headers = '" + std::string(headers) + "' WHERE url = '" + url +
           "'");
    EXPECT_FALSE(cache.Lookup(url).has_value()) << headers;
  }
}

}  // namespace
}  // namespace hubwatch::store
