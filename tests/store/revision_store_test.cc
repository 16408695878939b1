// RepoStore, RevisionStore and RevisionQueries against a real SQLite database: repos, ref
// cursors, Ingest's exactly-once, the HTTP cache and the change queries.

#include "tracker/store/revision_store.h"

#include <gtest/gtest.h>

#include "tests/store/store_fixtures.h"

namespace hubwatch::store {
namespace {

constexpr char kRepo[] = "google/gemma-2-9b-it";

class RevisionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(":memory:");
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(repos().AddRepo({.id = kRepo, .refs = {"main"}, .added_at = 5}).ok());
  }
  RepoStore& repos() { return store_->repos(); }
  RevisionStore& revisions() { return store_->revisions(); }
  HttpCacheStore& http_cache() { return store_->http_cache(); }
  RevisionQueries& queries() { return store_->queries(); }

  std::unique_ptr<Store> store_;
};

TEST_F(RevisionStoreTest, RepoRoundTripsThroughAddUpdateAndRemove) {
  RepoRecord repo{.id = "org/model", .refs = {"main", "v2"}, .added_at = 7};
  repo.source = Source::kConfig;
  ASSERT_TRUE(repos().AddRepo(repo).ok());
  Result<std::optional<RepoRecord>> got = repos().GetRepo("org/model");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->refs, (std::vector<std::string>{"main", "v2"}));
  EXPECT_EQ((*got)->source, Source::kConfig);
  EXPECT_EQ((*got)->state, RepoState::kOk);

  RepoRecord polled = **got;
  polled.state = RepoState::kRenamed;
  polled.renamed_to = "org/model-2";
  polled.next_poll_at = 99;
  polled.consecutive_errors = 3;
  EXPECT_EQ((*got)->last_reconciled_at, 0);
  EXPECT_FALSE((*got)->last_change_found_by);
  polled.last_reconciled_at = 77;
  polled.last_change_found_by = PollTrigger::kWebhook;
  ASSERT_TRUE(repos().UpdateRepoPoll(polled).ok());
  got = repos().GetRepo("org/model");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->state, RepoState::kRenamed);
  EXPECT_EQ((*got)->renamed_to, "org/model-2");
  EXPECT_EQ((*got)->next_poll_at, 0);  // the scheduler's decision is written apart
  ASSERT_TRUE(repos().SetNextPoll("org/model", 99).ok());
  EXPECT_EQ((*repos().GetRepo("org/model"))->next_poll_at, 99);
  EXPECT_EQ((*repos().GetRepo("org/model"))->consecutive_errors, 3);
  EXPECT_EQ((*got)->consecutive_errors, 3);
  EXPECT_EQ((*got)->last_reconciled_at, 77);
  EXPECT_EQ((*got)->last_change_found_by, PollTrigger::kWebhook);

  // AddRepo again updates the refs and the source, not the polling state.
  ASSERT_TRUE(repos().AddRepo({.id = "org/model", .refs = {"main"}}).ok());
  got = repos().GetRepo("org/model");
  EXPECT_EQ((*got)->refs, (std::vector<std::string>{"main"}));
  EXPECT_EQ((*got)->source, Source::kApi);
  EXPECT_EQ((*got)->state, RepoState::kRenamed);

  Result<std::vector<RepoRecord>> all = repos().ListRepos();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, kRepo);  // by id

  ASSERT_TRUE(repos().RemoveRepo("org/model").ok());
  EXPECT_FALSE(repos().GetRepo("org/model")->has_value());
  EXPECT_EQ(repos().ListRepos()->size(), 1u);
}

TEST_F(RevisionStoreTest, ListingWatermarksMoveAndSurviveAReopen) {
  EXPECT_TRUE(repos().ListingWatermarks()->empty());
  ASSERT_TRUE(repos().SetListingWatermark("hub", 1000, 5).ok());
  ASSERT_TRUE(repos().SetListingWatermark("hub", 1200, 6).ok());
  ASSERT_TRUE(repos().SetListingWatermark("owner:google", 900, 6).ok());
  Result<std::map<std::string, int64_t>> marks = repos().ListingWatermarks();
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(*marks, (std::map<std::string, int64_t>{{"hub", 1200}, {"owner:google", 900}}));
}

TEST_F(RevisionStoreTest, RefHeadsMoveAndAreScopedToTheirRepo) {
  EXPECT_FALSE(repos().GetRefHead(kRepo, "main")->has_value());
  ASSERT_TRUE(repos().SetRefHead(kRepo, "main", "a1", 10).ok());
  ASSERT_TRUE(repos().SetRefHead(kRepo, "main", "b2", 11).ok());
  EXPECT_EQ(*repos().GetRefHead(kRepo, "main"), std::optional<std::string>("b2"));
  EXPECT_FALSE(repos().GetRefHead(kRepo, "v2")->has_value());
  EXPECT_FALSE(repos().GetRefHead("other/repo", "main")->has_value());
}

TEST_F(RevisionStoreTest, IngestingTheSameRevisionTwiceChangesNothing) {
  Result<IngestOutcome> first = revisions().Ingest(SampleIngest("a1", ""));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, IngestOutcome::kIngested);
  RevisionIngest again = SampleIngest("a1", "");
  again.changes.push_back(again.changes[0]);  // different content: still not written
  Result<IngestOutcome> second = revisions().Ingest(again);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, IngestOutcome::kAlreadyPresent);

  EXPECT_EQ(revisions().ChangesOf(kRepo, "a1")->size(), 1u);
  EXPECT_EQ(store_->advisories().ListAdvisories({})->size(), 1u);
  EXPECT_TRUE(*revisions().HasRevision(kRepo, "a1"));
  EXPECT_EQ(revisions().GetManifest(kRepo, "a1")->size(), 2u);
  EXPECT_EQ(*revisions().GetBlob("oid-config-a1"),
            std::optional<std::string>("{\"model_type\": \"gemma2\"}"));
  Result<std::optional<SafetensorsHeader>> header = revisions().GetHeader("sha-w1");
  ASSERT_TRUE(header.ok() && header->has_value());
  EXPECT_EQ((*header)->tensors.at("model.norm.weight").shape, (std::vector<int64_t>{3584}));
  EXPECT_EQ(*repos().GetRefHead(kRepo, "main"), std::optional<std::string>("a1"));
  Result<std::optional<EstimateRecord>> estimate = revisions().LatestEstimate(kRepo);
  ASSERT_TRUE(estimate.ok() && estimate->has_value());
  EXPECT_EQ((*estimate)->params_total, 9241705984u);
}

TEST_F(RevisionStoreTest, HttpCachePutOverwritesAndGetReadsBack) {
  EXPECT_FALSE(http_cache().Get("https://hub/x")->has_value());
  ASSERT_TRUE(http_cache().Put("https://hub/x", {"\"e1\"", "body1", "[]"}, 1).ok());
  ASSERT_TRUE(
      http_cache().Put("https://hub/x", {"\"e2\"", std::string("b\0dy", 4), "[]"}, 2).ok());
  Result<std::optional<CachedResponse>> got = http_cache().Get("https://hub/x");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->etag, "\"e2\"");
  EXPECT_EQ((*got)->body, std::string("b\0dy", 4));
  EXPECT_FALSE(http_cache().Get("https://hub/y")->has_value());
}

TEST_F(RevisionStoreTest, ChangesAfterAPinAreCountedByImpactAndRewrittenOnesLeftOut) {
  ASSERT_TRUE(revisions().Ingest(SampleIngest("a1", "")).ok());
  RevisionIngest b = SampleIngest("b2", "a1");
  b.changes[0].impact = diff::Impact::kBreaking;
  b.changes.push_back(b.changes[0]);
  b.changes[1].impact = diff::Impact::kCosmetic;
  b.changes[1].kind = diff::ChangeKind::kTokenizer;
  ASSERT_TRUE(revisions().Ingest(b).ok());
  RevisionIngest c = SampleIngest("c3", "b2");
  c.rewritten_away = {"c3"};
  ASSERT_TRUE(revisions().Ingest(c).ok());

  Result<ChangeTally> tally = queries().TallyChangesAfter(kRepo, "a1", "");
  ASSERT_TRUE(tally.ok());
  EXPECT_EQ(tally->breaking, 1);
  EXPECT_EQ(tally->cosmetic, 1);
  EXPECT_EQ(tally->behavioral, 0);  // c3's is rewritten away
  EXPECT_EQ(queries().ChangesAfter(kRepo, "a1", "tokenizer")->size(), 1u);
  EXPECT_TRUE(queries().ChangesAfter(kRepo, "unknown", "")->empty());

  Result<std::optional<LastChange>> last = queries().LatestChange(kRepo, "");
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ((*last)->sha, "b2");  // the newest non-cosmetic change not rewritten away
  EXPECT_EQ(*queries().FindRevisionShas(kRepo, "b", 10), (std::vector<std::string>{"b2"}));
  EXPECT_EQ(*queries().ReposWithRevision("a1"), (std::vector<std::string>{kRepo}));
  Result<std::optional<RevisionRecord>> latest = revisions().LatestRevision(kRepo);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->sha, "b2");
}

TEST(RevisionStoreDamage, AStoredImpactOrSourceItDoesNotKnowIsAnError) {
  TempDb db;
  std::unique_ptr<Store> store = OpenOrDie(db.path());
  ASSERT_TRUE(store->repos().AddRepo({.id = kRepo, .refs = {"main"}}).ok());
  ASSERT_TRUE(store->revisions().Ingest(SampleIngest("a1", "")).ok());
  ASSERT_TRUE(store->db().Exec("PRAGMA ignore_check_constraints=ON", "test").ok());
  ASSERT_TRUE(store->db().Exec("UPDATE changes SET impact = 'severe'", "test").ok());
  ASSERT_TRUE(store->db().Exec("UPDATE repos SET source = 'cli'", "test").ok());
  Result<std::vector<ChangeRecord>> changes = store->revisions().ChangesOf(kRepo, "a1");
  ASSERT_FALSE(changes.ok());
  EXPECT_NE(changes.error().message.find("not a known impact"), std::string::npos);
  EXPECT_FALSE(store->repos().GetRepo(kRepo).ok());
}

}  // namespace
}  // namespace hubwatch::store
