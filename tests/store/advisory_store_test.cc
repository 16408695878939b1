// AdvisoryStore against a real SQLite database: the feed's order and seq, settling bursts and
// their re-stamped OSV records, and osv.dev range matching.

#include "tracker/store/advisory_store.h"

#include <gtest/gtest.h>

#include "tests/store/store_fixtures.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::store {
namespace {

constexpr char kRepo[] = "google/gemma-2-9b-it";

class AdvisoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(":memory:");
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->repos().AddRepo({.id = kRepo, .refs = {"main"}}).ok());
  }
  AdvisoryStore& advisories() { return store_->advisories(); }
  void Ingest(RevisionIngest in) {
    Result<IngestOutcome> r = store_->revisions().Ingest(in);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  std::vector<std::string> Ids(const Result<std::vector<AdvisoryRecord>>& list) {
    EXPECT_TRUE(list.ok());
    std::vector<std::string> out;
    if (list.ok()) {
      for (const AdvisoryRecord& a : *list) out.push_back(a.id);
    }
    return out;
  }

  std::unique_ptr<Store> store_;
};

TEST_F(AdvisoryStoreTest, PublishedAdvisoriesGetConsecutiveSeqsInIngestOrder) {
  EXPECT_EQ(*advisories().MaxAdvisorySeq(), 0);
  Ingest(SampleIngest("a1", ""));
  Ingest(SampleIngest("b2", "a1"));
  Ingest(SampleIngest("c3", "b2"));
  Result<std::vector<AdvisoryRecord>> all = advisories().ListAdvisories({});
  EXPECT_EQ(Ids(all),
            (std::vector<std::string>{"x_HUBWATCH-a1", "x_HUBWATCH-b2", "x_HUBWATCH-c3"}));
  EXPECT_EQ((*all)[0].seq, 1);
  EXPECT_EQ((*all)[2].seq, 3);
  EXPECT_EQ(*advisories().MaxAdvisorySeq(), 3);
  EXPECT_EQ(Ids(advisories().ListAdvisories({.after_seq = 1, .limit = 1})),
            (std::vector<std::string>{"x_HUBWATCH-b2"}));
  EXPECT_EQ(Ids(advisories().RecentAdvisories({.limit = 2})),
            (std::vector<std::string>{"x_HUBWATCH-c3", "x_HUBWATCH-b2"}));
  Result<std::optional<AdvisoryRecord>> one = advisories().GetAdvisory("x_HUBWATCH-b2");
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->sha, "b2");
  EXPECT_EQ((*one)->ingested_at, 1700000000);
  EXPECT_FALSE(advisories().GetAdvisory("x_HUBWATCH-none")->has_value());
}

TEST_F(AdvisoryStoreTest, AHeldBurstSettlesAsOneAndIsRestamped) {
  RevisionIngest a = SampleIngest("a1", "");
  a.settle_at = 1000;
  Ingest(a);
  RevisionIngest b = SampleIngest("b2", "a1");
  b.revision.first_seen_at = 1700000100;
  b.settle_at = 2000;  // the burst goes on: a1's advisory waits too
  Ingest(b);
  EXPECT_TRUE(*advisories().HasHeldAdvisories(kRepo));
  EXPECT_TRUE(advisories().ListAdvisories({})->empty());
  EXPECT_TRUE(store_->outbox().ListDeliveries(1)->empty());
  Result<std::vector<HeldBurst>> bursts = advisories().HeldBursts();
  ASSERT_TRUE(bursts.ok());
  ASSERT_EQ(bursts->size(), 1u);
  EXPECT_EQ((*bursts)[0].settle_at, 2000);
  EXPECT_EQ((*bursts)[0].advisories, 2);

  Result<Publication> early = advisories().PublishSettled(kRepo, 1500);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->published, 0);
  EXPECT_EQ(early->next_settle_at, 2000);

  Result<Publication> done = advisories().PublishSettled(kRepo, 2000);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->published, 2);
  EXPECT_FALSE(done->next_settle_at.has_value());
  EXPECT_FALSE(*advisories().HasHeldAdvisories(kRepo));
  EXPECT_TRUE(advisories().HeldBursts()->empty());

  Result<std::vector<AdvisoryRecord>> all = advisories().ListAdvisories({});
  ASSERT_EQ(Ids(all), (std::vector<std::string>{"x_HUBWATCH-a1", "x_HUBWATCH-b2"}));
  const std::string when = advisory::Rfc3339(2000);
  for (const AdvisoryRecord& r : *all) {
    EXPECT_EQ(r.published, when);
    EXPECT_EQ(r.modified, when);
    EXPECT_EQ(r.osv.value("published", ""), when);
    EXPECT_EQ(r.osv.value("modified", ""), when);
  }
  EXPECT_EQ((*all)[0].osv["database_specific"]["ingested_at"], advisory::Rfc3339(1700000000));
  EXPECT_EQ((*all)[1].osv["database_specific"]["ingested_at"], advisory::Rfc3339(1700000100));
  // Each published advisory queued its delivery, at the publication time.
  Result<std::vector<OutboxRow>> rows = store_->outbox().ListDeliveries(1);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].created_at, 2000);
}

TEST_F(AdvisoryStoreTest, AffectingMatchesTheRangeFromIntroducedToFixed) {
  Ingest(SampleIngest("a1", ""));
  RevisionIngest b = SampleIngest("b2", "a1");
  b.advisories.clear();
  Ingest(b);
  RevisionIngest c = SampleIngest("c3", "b2");
  c.advisories[0].osv["affected"] = {
      {{"ranges", {{{"type", "GIT"}, {"events", {{{"introduced", "b2"}}, {{"fixed", "c3"}}}}}}}}};
  Ingest(c);
  Ingest(SampleIngest("d4", "c3"));

  auto affecting = [&](const std::string& commit) {
    return Ids(advisories().AdvisoriesAffecting({.repo = kRepo, .commit = commit}));
  };
  // Without a range, introduced is the start; fixed is always the advisory's own revision.
  EXPECT_EQ(affecting("b2"), (std::vector<std::string>{"x_HUBWATCH-c3", "x_HUBWATCH-d4"}));
  EXPECT_EQ(affecting("a1"), (std::vector<std::string>{"x_HUBWATCH-d4"}));  // c3's starts at b2
  EXPECT_EQ(affecting("c3"), (std::vector<std::string>{"x_HUBWATCH-d4"}));
  EXPECT_TRUE(affecting("d4").empty());
  EXPECT_TRUE(affecting("unknown").empty());
  EXPECT_EQ(affecting("").size(), 3u);
  EXPECT_EQ(Ids(advisories().AdvisoriesAffecting(
                {.repo = kRepo, .commit = "", .after_seq = 1, .limit = 1})),
            (std::vector<std::string>{"x_HUBWATCH-c3"}));
}

}  // namespace
}  // namespace hubwatch::store
