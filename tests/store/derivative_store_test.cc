// DerivativeStore against a real SQLite database: which upstream advisories are fixes to check
// against, recording checks (lags replaced, kept on an error), the derivative's own advisory
// (published once with its outbox rows, rewritten once when it catches up, back when it lags
// again), counts and the tally.

#include "tracker/store/derivative_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/store/store_fixtures.h"
#include "tracker/advisory/derivative_osv.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::store {
namespace {

using derivatives::AdvisoryLag;
using derivatives::DerivativeCheck;
using derivatives::LagStatus;
using derivatives::Relation;

constexpr char kUpstream[] = "google/gemma-2-9b-it";
constexpr char kGguf[] = "someone/gemma-2-9b-it-GGUF";
constexpr char kTune[] = "someone/gemma-2-9b-it-tuned";
const std::string kHead1(40, '1');
const std::string kHead2(40, '2');

diff::Change MakeChange(diff::ChangeKind kind, diff::Impact impact, std::string path) {
  diff::Change c;
  c.kind = kind;
  c.impact = impact;
  c.path = std::move(path);
  c.summary = std::string(diff::KindName(kind)) + " edit";
  c.details = nlohmann::json::object();
  return c;
}

class DerivativeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(":memory:");
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->repos().AddRepo({.id = kUpstream, .refs = {"main"}}).ok());
    // a1: a config fix (behavioral) and a weights change (breaking, not a tracked file).
    Ingest("a1", "",
           {MakeChange(diff::ChangeKind::kConfig, diff::Impact::kBehavioral, "config.json"),
            MakeChange(diff::ChangeKind::kWeights, diff::Impact::kBreaking, "model.safetensors")});
    // b2: a cosmetic tokenizer change, a breaking chat template fix, special tokens (no path).
    Ingest("b2", "a1",
           {MakeChange(diff::ChangeKind::kTokenizer, diff::Impact::kCosmetic, "tokenizer.json"),
            MakeChange(diff::ChangeKind::kChatTemplate, diff::Impact::kBreaking,
                       "tokenizer_config.json"),
            MakeChange(diff::ChangeKind::kSpecialTokens, diff::Impact::kBehavioral, "")});
    // c3: a generation config fix, withdrawn later.
    Ingest("c3", "b2",
           {MakeChange(diff::ChangeKind::kGenerationConfig, diff::Impact::kBehavioral,
                       "generation_config.json")});
    Exec("UPDATE advisories SET withdrawn = '2026-01-01T00:00:00Z' WHERE id = 'x_HUBWATCH-c3-0'");
    // d4: a tokenizer fix still held (its burst has not settled).
    Ingest("d4", "c3",
           {MakeChange(diff::ChangeKind::kTokenizer, diff::Impact::kBehavioral, "tokenizer.json")},
           /*settle_at=*/5000);
  }

  // A revision of kUpstream with `changes`, each advised as x_HUBWATCH-<sha>-<ordinal>.
  void Ingest(const std::string& sha, const std::string& parent, std::vector<diff::Change> changes,
              std::optional<int64_t> settle_at = std::nullopt) {
    RevisionIngest in = SampleIngest(sha, parent);
    in.changes = std::move(changes);
    in.advisories.clear();
    for (size_t i = 0; i < in.changes.size(); ++i) {
      const std::string id = "x_HUBWATCH-" + sha + "-" + std::to_string(i);
      in.advisories.push_back({static_cast<int>(i),
                               id,
                               {{"id", id}, {"summary", "upstream fix " + id}},
                               "2026-01-01T00:00:00Z",
                               "2026-01-01T00:00:00Z",
                               {"subscription:1"}});
    }
    in.settle_at = settle_at;
    Result<IngestOutcome> r = store_->revisions().Ingest(in);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  void Exec(const std::string& sql) {
    ASSERT_EQ(sqlite3_exec(store_->db().handle(), sql.c_str(), nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(store_->db().handle());
  }
  int64_t Count(const std::string& sql) {
    sqlite3_stmt* q = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(store_->db().handle(), sql.c_str(), -1, &q, nullptr), SQLITE_OK);
    const int64_t n = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
    sqlite3_finalize(q);
    return n;
  }
  DerivativeStore& derivatives() { return store_->derivatives(); }

  static DerivativeCheck Check(const std::string& id, const std::string& head,
                               std::vector<AdvisoryLag> lags, int64_t checked_at = 1000) {
    return {.upstream = kUpstream,
            .id = id,
            .relation = Relation::kQuantized,
            .head = head,
            .last_modified = "2026-02-01T00:00:00Z",
            .checked_at = checked_at,
            .facets_json = R"({"format":"gguf"})",
            .lags = std::move(lags)};
  }
  void Record(const DerivativeCheck& check, int64_t now, const DerivativeTargets& targets = {}) {
    Status s = derivatives().RecordCheck(check, now, targets);
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
  derivatives::DerivativeRecord GetOrDie(const std::string& id) {
    Result<std::optional<derivatives::DerivativeRecord>> r = derivatives().Get(kUpstream, id);
    EXPECT_TRUE(r.ok() && r->has_value());
    return r.ok() && r->has_value() ? **r : derivatives::DerivativeRecord{};
  }
  AdvisoryRecord AdvisoryOrDie(const std::string& id) {
    Result<std::optional<AdvisoryRecord>> a = store_->advisories().GetAdvisory(id);
    EXPECT_TRUE(a.ok() && a->has_value()) << id;
    return a.ok() && a->has_value() ? **a : AdvisoryRecord{};
  }

  std::unique_ptr<Store> store_;
};

TEST_F(DerivativeStoreTest, UpstreamFixesArePublishedBehavioralFixesOfTheFilesDerivativesCopy) {
  Result<std::vector<derivatives::UpstreamFix>> fixes = derivatives().UpstreamFixes(kUpstream);
  ASSERT_TRUE(fixes.ok()) << fixes.error().message;
  // Left out: weights (kind), the cosmetic tokenizer edit (impact), c3 (withdrawn), d4 (held).
  ASSERT_EQ(fixes->size(), 3u);
  const derivatives::UpstreamFix& config = (*fixes)[0];
  EXPECT_EQ(config.advisory_id, "x_HUBWATCH-a1-0");
  EXPECT_EQ(config.kind, "config");
  EXPECT_EQ(config.path, "config.json");
  EXPECT_EQ(config.sha, "a1");
  EXPECT_EQ(config.parent_sha, "");  // a1 has no parent
  EXPECT_EQ(config.summary, "upstream fix x_HUBWATCH-a1-0");
  EXPECT_EQ(config.change_id,
            Count("SELECT change_id FROM advisories WHERE id = 'x_HUBWATCH-a1-0'"));
  EXPECT_EQ((*fixes)[1].advisory_id, "x_HUBWATCH-b2-1");
  EXPECT_EQ((*fixes)[1].kind, "chat_template");
  EXPECT_EQ((*fixes)[1].parent_sha, "a1");
  EXPECT_EQ((*fixes)[2].advisory_id, "x_HUBWATCH-b2-2");
  EXPECT_EQ((*fixes)[2].kind, "special_tokens");
  EXPECT_EQ((*fixes)[2].path, "");
  EXPECT_TRUE(derivatives().UpstreamFixes("other/repo")->empty());

  // Published at last, the held fix joins them, oldest first.
  ASSERT_TRUE(store_->advisories().PublishSettled(kUpstream, 5000).ok());
  fixes = derivatives().UpstreamFixes(kUpstream);
  ASSERT_EQ(fixes->size(), 4u);
  EXPECT_EQ(fixes->back().advisory_id, "x_HUBWATCH-d4-0");
  EXPECT_EQ(fixes->back().parent_sha, "c3");
}

TEST_F(DerivativeStoreTest, ACheckReplacesTheLagsAndAnErrorKeepsThem) {
  Record(Check(kGguf, kHead1,
               {{"x_HUBWATCH-a1-0", LagStatus::kFixed}, {"x_HUBWATCH-b2-1", LagStatus::kDiverged}}),
         2000);
  derivatives::DerivativeRecord r = GetOrDie(kGguf);
  EXPECT_EQ(r.upstream, kUpstream);
  EXPECT_EQ(r.relation, Relation::kQuantized);
  EXPECT_EQ(r.head, kHead1);
  EXPECT_EQ(r.last_modified, "2026-02-01T00:00:00Z");
  EXPECT_EQ(r.listed_at, 2000);
  EXPECT_EQ(r.checked_at, 1000);
  EXPECT_EQ(r.facets_json, R"({"format":"gguf"})");
  EXPECT_EQ(r.error, "");
  ASSERT_EQ(r.lags.size(), 2u);
  EXPECT_EQ(r.lags[0].advisory_id, "x_HUBWATCH-a1-0");
  EXPECT_EQ(r.lags[0].status, LagStatus::kFixed);
  EXPECT_EQ(r.lags[0].derivative_advisory_id, "");  // never lagged: no advisory of its own
  EXPECT_EQ(r.lags[1].status, LagStatus::kDiverged);

  // The next check's lags replace them.
  Record(Check(kGguf, kHead2, {{"x_HUBWATCH-b2-2", LagStatus::kNotApplicable}}, 3000), 3000);
  r = GetOrDie(kGguf);
  EXPECT_EQ(r.head, kHead2);
  ASSERT_EQ(r.lags.size(), 1u);
  EXPECT_EQ(r.lags[0].advisory_id, "x_HUBWATCH-b2-2");
  EXPECT_EQ(r.lags[0].status, LagStatus::kNotApplicable);

  // A failed check stores its error; the head, facets and lags it could not read stay.
  DerivativeCheck failed = Check(kGguf, std::string(40, '3'), {}, 4000);
  failed.error = "tokenizer_config.json: 503";
  failed.facets_json = "";
  Record(failed, 4000);
  r = GetOrDie(kGguf);
  EXPECT_EQ(r.error, "tokenizer_config.json: 503");
  EXPECT_EQ(r.checked_at, 4000);
  EXPECT_EQ(r.listed_at, 4000);
  EXPECT_EQ(r.head, kHead2);
  EXPECT_EQ(r.facets_json, R"({"format":"gguf"})");
  ASSERT_EQ(r.lags.size(), 1u);
  EXPECT_EQ(r.lags[0].advisory_id, "x_HUBWATCH-b2-2");
  // A new derivative whose first check failed has no head yet.
  DerivativeCheck fresh = failed;
  fresh.id = kTune;
  Record(fresh, 4000);
  EXPECT_EQ(GetOrDie(kTune).head, "");
  EXPECT_EQ(GetOrDie(kTune).facets_json, "{}");
  // A read check clears the error.
  Record(Check(kGguf, kHead2, {}, 5000), 5000);
  EXPECT_EQ(GetOrDie(kGguf).error, "");
  EXPECT_TRUE(GetOrDie(kGguf).lags.empty());
}

TEST_F(DerivativeStoreTest, ALagOnAnAdvisoryUpstreamDoesNotHaveIsRefusedWhole) {
  Status s = derivatives().RecordCheck(
      Check(kGguf, kHead1,
            {{"x_HUBWATCH-a1-0", LagStatus::kLagging}, {"x_HUBWATCH-none", LagStatus::kLagging}}),
      2000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidInput);
  EXPECT_FALSE(derivatives().Get(kUpstream, kGguf)->has_value());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM advisories WHERE repo = 'someone/gemma-2-9b-it-GGUF'"), 0);
}

TEST_F(DerivativeStoreTest, ALaggingDerivativeGetsOneAdvisoryWithItsOutboxRows) {
  const int64_t seq_before = *store_->advisories().MaxAdvisorySeq();
  std::vector<std::pair<std::string, std::string>> asked;  // derivative, change kind
  const DerivativeTargets targets = [&](const std::string& derivative, const diff::Change& c) {
    asked.emplace_back(derivative, diff::KindName(c.kind));
    return std::vector<std::string>{"subscription:7", "subscription:8"};
  };
  Record(Check(kGguf, kHead1,
               {{"x_HUBWATCH-b2-1", LagStatus::kLagging}, {"x_HUBWATCH-a1-0", LagStatus::kFixed}}),
         2000, targets);
  const std::string id = advisory::DerivativeAdvisoryId(kGguf, "x_HUBWATCH-b2-1");
  EXPECT_EQ(GetOrDie(kGguf).lags[1].derivative_advisory_id, id);  // lags by advisory id
  EXPECT_EQ(asked, (std::vector<std::pair<std::string, std::string>>{{kGguf, "chat_template"}}));
  const AdvisoryRecord a = AdvisoryOrDie(id);
  EXPECT_EQ(a.repo, kGguf);
  EXPECT_EQ(a.sha, kHead1);
  EXPECT_EQ(a.kind, "chat_template");
  EXPECT_EQ(a.change_id, Count("SELECT change_id FROM advisories WHERE id = 'x_HUBWATCH-b2-1'"));
  EXPECT_EQ(a.seq, seq_before + 1);
  EXPECT_EQ(a.published, advisory::Rfc3339(2000));
  EXPECT_EQ(a.modified, advisory::Rfc3339(2000));
  EXPECT_EQ(a.ingested_at, 2000);
  EXPECT_EQ(a.osv["id"], id);
  EXPECT_EQ(a.osv["database_specific"]["status"], "lagging");
  EXPECT_EQ(a.osv["database_specific"]["upstream_advisory"], "x_HUBWATCH-b2-1");
  EXPECT_EQ(a.osv["related"], nlohmann::json::array({"x_HUBWATCH-b2-1"}));
  Result<std::vector<OutboxRow>> rows = store_->outbox().ListDeliveries(7);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].advisory_id, id);
  EXPECT_EQ((*rows)[0].created_at, 2000);
  EXPECT_EQ(store_->outbox().ListDeliveries(8)->size(), 1u);

  // Still lagging at a later head: nothing new is published, queued or rewritten.
  Record(Check(kGguf, kHead2, {{"x_HUBWATCH-b2-1", LagStatus::kLagging}}, 3000), 3000, targets);
  EXPECT_EQ(*store_->advisories().MaxAdvisorySeq(), seq_before + 1);
  EXPECT_EQ(store_->outbox().ListDeliveries(7)->size(), 1u);
  EXPECT_EQ(AdvisoryOrDie(id).modified, advisory::Rfc3339(2000));
  EXPECT_EQ(asked.size(), 1u);
  EXPECT_EQ(GetOrDie(kGguf).lags[0].derivative_advisory_id, id);
  // Another derivative lagging on the same fix gets an advisory of its own.
  Record(Check(kTune, kHead1, {{"x_HUBWATCH-b2-1", LagStatus::kLagging}}), 3000);
  EXPECT_NE(GetOrDie(kTune).lags[0].derivative_advisory_id, id);
  EXPECT_EQ(*store_->advisories().MaxAdvisorySeq(), seq_before + 2);
}

TEST_F(DerivativeStoreTest, CatchingUpRewritesTheAdvisoryOnceAndLaggingAgainRewritesItBack) {
  const std::string id = advisory::DerivativeAdvisoryId(kGguf, "x_HUBWATCH-a1-0");
  Record(Check(kGguf, kHead1, {{"x_HUBWATCH-a1-0", LagStatus::kLagging}}), 2000);
  const int64_t seq = AdvisoryOrDie(id).seq;
  const int64_t queued = Count("SELECT COUNT(*) FROM outbox");

  // Caught up at kHead2: the record says so, fixed at that head; published stays.
  Record(Check(kGguf, kHead2, {{"x_HUBWATCH-a1-0", LagStatus::kFixed}}, 3000), 3000);
  AdvisoryRecord a = AdvisoryOrDie(id);
  EXPECT_EQ(a.seq, seq);
  EXPECT_EQ(a.published, advisory::Rfc3339(2000));
  EXPECT_EQ(a.modified, advisory::Rfc3339(3000));
  EXPECT_EQ(a.osv["published"], advisory::Rfc3339(2000));
  EXPECT_EQ(a.osv["modified"], advisory::Rfc3339(3000));
  EXPECT_EQ(a.osv["database_specific"]["status"], "fixed");
  EXPECT_EQ(a.osv["database_specific"]["head"], kHead2);
  EXPECT_EQ(a.osv["affected"][0]["ranges"][0]["events"][1]["fixed"], kHead2);
  EXPECT_EQ(GetOrDie(kGguf).lags[0].derivative_advisory_id, id);  // kept after it caught up

  // Once: neither another fixed check nor a diverged one rewrites it again.
  Record(Check(kGguf, kHead2, {{"x_HUBWATCH-a1-0", LagStatus::kFixed}}, 4000), 4000);
  Record(Check(kGguf, std::string(40, '3'), {{"x_HUBWATCH-a1-0", LagStatus::kDiverged}}, 4500),
         4500);
  EXPECT_EQ(AdvisoryOrDie(id).modified, advisory::Rfc3339(3000));
  EXPECT_EQ(AdvisoryOrDie(id).osv["database_specific"]["status"], "fixed");

  // Lagging again (a re-upload of the old file): the same advisory says so again.
  Record(Check(kGguf, std::string(40, '4'), {{"x_HUBWATCH-a1-0", LagStatus::kLagging}}, 5000),
         5000);
  a = AdvisoryOrDie(id);
  EXPECT_EQ(a.seq, seq);
  EXPECT_EQ(a.modified, advisory::Rfc3339(5000));
  EXPECT_EQ(a.osv["database_specific"]["status"], "lagging");
  EXPECT_EQ(a.osv["affected"][0]["ranges"][0]["events"].size(), 1u);  // introduced only
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox"), queued);            // updates queue nothing
  EXPECT_EQ(Count("SELECT COUNT(*) FROM advisories WHERE repo = 'someone/gemma-2-9b-it-GGUF'"), 1);

  // Forgotten, then found lagging again: the id is the same and it is not published twice.
  ASSERT_TRUE(derivatives().Forget(kUpstream, kGguf).ok());
  EXPECT_FALSE(derivatives().Get(kUpstream, kGguf)->has_value());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM derivative_lags"), 0);
  Record(Check(kGguf, std::string(40, '4'), {{"x_HUBWATCH-a1-0", LagStatus::kLagging}}, 6000),
         6000);
  EXPECT_EQ(GetOrDie(kGguf).lags[0].derivative_advisory_id, id);
  EXPECT_EQ(AdvisoryOrDie(id).seq, seq);
}

TEST_F(DerivativeStoreTest, CountsByAdvisoryAndTheTallyByDerivative) {
  Record(Check("a/lagging", kHead1,
               {{"x_HUBWATCH-a1-0", LagStatus::kLagging}, {"x_HUBWATCH-b2-1", LagStatus::kFixed}}),
         2000);
  Record(Check("b/diverged", kHead1,
               {{"x_HUBWATCH-a1-0", LagStatus::kDiverged}, {"x_HUBWATCH-b2-1", LagStatus::kFixed}}),
         2000);
  Record(Check("c/fixed", kHead1,
               {{"x_HUBWATCH-a1-0", LagStatus::kFixed},
                {"x_HUBWATCH-b2-1", LagStatus::kNotApplicable}}),
         2000);
  Record(Check("d/adapter", kHead1, {{"x_HUBWATCH-a1-0", LagStatus::kNotApplicable}}), 2000);
  DerivativeCheck failed = Check("e/unread", kHead1, {});
  failed.error = "gated";
  Record(failed, 2000);

  Result<std::map<std::string, derivatives::LagCounts>> counts =
      derivatives().CountsByAdvisory(kUpstream);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  ASSERT_EQ(counts->size(), 2u);
  const derivatives::LagCounts& a1 = counts->at("x_HUBWATCH-a1-0");
  EXPECT_EQ(a1.lagging, 1);
  EXPECT_EQ(a1.diverged, 1);
  EXPECT_EQ(a1.fixed, 1);
  EXPECT_EQ(a1.not_applicable, 1);
  const derivatives::LagCounts& b2 = counts->at("x_HUBWATCH-b2-1");
  EXPECT_EQ(b2.fixed, 2);
  EXPECT_EQ(b2.not_applicable, 1);
  EXPECT_EQ(b2.lagging, 0);

  Result<DerivativeTally> tally = derivatives().Tally(kUpstream);
  ASSERT_TRUE(tally.ok()) << tally.error().message;
  EXPECT_EQ(tally->derivatives, 5);
  EXPECT_EQ(tally->checked, 4);
  EXPECT_EQ(tally->lagging, 1);
  EXPECT_EQ(tally->diverged, 1);
  EXPECT_EQ(tally->fixed, 1);
  EXPECT_EQ(tally->not_applicable, 1);  // d/adapter
  EXPECT_EQ(tally->unchecked, 1);       // e/unread: never read

  Result<std::vector<derivatives::DerivativeRecord>> list = derivatives().List(kUpstream);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 5u);
  EXPECT_EQ((*list)[0].id, "a/lagging");
  EXPECT_EQ((*list)[0].lags.size(), 2u);
  EXPECT_EQ((*list)[3].lags.size(), 1u);
  EXPECT_TRUE((*list)[4].lags.empty());
  EXPECT_EQ(derivatives().Tally("other/repo")->derivatives, 0);
  EXPECT_TRUE(derivatives().CountsByAdvisory("other/repo")->empty());
}

TEST_F(DerivativeStoreTest, MarkListedTouchesOnlyListedAtAndUntrackingTakesEverything) {
  Record(Check(kGguf, kHead1, {{"x_HUBWATCH-a1-0", LagStatus::kLagging}}), 2000);
  ASSERT_TRUE(derivatives().MarkListed(kUpstream, {{kGguf}, {"not/stored"}}, 9000).ok());
  const derivatives::DerivativeRecord r = GetOrDie(kGguf);
  EXPECT_EQ(r.listed_at, 9000);
  EXPECT_EQ(r.checked_at, 1000);
  EXPECT_EQ(r.head, kHead1);
  EXPECT_FALSE(derivatives().Get(kUpstream, "not/stored")->has_value());

  // Untracking upstream removes its derivatives, their lags and their advisories.
  ASSERT_TRUE(store_->repos().RemoveRepo(kUpstream).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM derivatives"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM derivative_lags"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM advisories"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox"), 0);
}

// Issue 28: a derivative that was not checked again after upstream published a newer fix keeps
// its old statuses as a record, but they are no longer counted: unchecked, never fixed.
TEST_F(DerivativeStoreTest, StatusesOlderThanUpstreamsNewestFixAreUncheckedNotFixed) {
  const AdvisoryLag a1_fixed{"x_HUBWATCH-a1-0", LagStatus::kFixed};
  Record(Check("a/fixed", kHead1, {a1_fixed}), 2000);
  Record(Check("b/lagging", kHead1, {{"x_HUBWATCH-a1-0", LagStatus::kLagging}}), 2000);
  EXPECT_TRUE(GetOrDie("a/fixed").current);
  EXPECT_EQ(GetOrDie("a/fixed").fixes_through, *derivatives().NewestFixSeq(kUpstream));
  EXPECT_EQ(derivatives().Tally(kUpstream)->fixed, 1);

  // The held tokenizer fix is published: the newest fix now, checked by neither.
  const int64_t before = *derivatives().NewestFixSeq(kUpstream);
  ASSERT_TRUE(store_->advisories().PublishSettled(kUpstream, 5000).ok());
  const int64_t newest = *derivatives().NewestFixSeq(kUpstream);
  EXPECT_GT(newest, before);
  const derivatives::DerivativeRecord stale = GetOrDie("a/fixed");
  EXPECT_FALSE(stale.current);
  ASSERT_EQ(stale.lags.size(), 1u);
  EXPECT_EQ(stale.lags[0].status, LagStatus::kFixed) << "the record of the last check stays";
  Result<DerivativeTally> tally = derivatives().Tally(kUpstream);
  ASSERT_TRUE(tally.ok()) << tally.error().message;
  EXPECT_EQ(tally->derivatives, 2);
  EXPECT_EQ(tally->checked, 0);
  EXPECT_EQ(tally->fixed, 0);
  EXPECT_EQ(tally->lagging, 0);
  EXPECT_EQ(tally->unchecked, 2);
  const derivatives::LagCounts a1 =
      derivatives().CountsByAdvisory(kUpstream)->at("x_HUBWATCH-a1-0");
  EXPECT_EQ(a1.fixed, 0);
  EXPECT_EQ(a1.lagging, 0);
  EXPECT_EQ(a1.unchecked, 2);

  // A check classified before the fix was published does not cover it, even recorded after.
  DerivativeCheck late = Check("a/fixed", kHead2, {a1_fixed}, 6000);
  late.fixes_through = before;
  Record(late, 6000);
  EXPECT_FALSE(GetOrDie("a/fixed").current);
  // Its stored facets classified against every fix (a round that found its head unmoved).
  ASSERT_TRUE(
      derivatives()
          .MarkListed(
              kUpstream,
              {{"a/fixed", derivatives::Signals{12, 3, "2024-04-18T05:41:09.000Z"}, newest}}, 7000)
          .ok());
  const derivatives::DerivativeRecord again = GetOrDie("a/fixed");
  EXPECT_TRUE(again.current);
  EXPECT_EQ(again.listed_at, 7000);
  EXPECT_EQ(again.signals, (derivatives::Signals{12, 3, "2024-04-18T05:41:09.000Z"}));
  EXPECT_EQ(derivatives().Tally(kUpstream)->fixed, 1);
  EXPECT_EQ(derivatives().Tally(kUpstream)->unchecked, 1);
  // A failed check keeps what the kept lags covered; signals are set only when given.
  DerivativeCheck failed = Check("a/fixed", kHead2, {}, 8000);
  failed.error = "503";
  failed.fixes_through = newest + 100;
  Record(failed, 8000);
  EXPECT_EQ(GetOrDie("a/fixed").fixes_through, newest);
  EXPECT_EQ(GetOrDie("a/fixed").signals.downloads, 12);
  // Withdrawn, the newest fix no longer counts: b/lagging's old check is current again.
  Exec("UPDATE advisories SET withdrawn = '2026-02-01T00:00:00Z' WHERE id = 'x_HUBWATCH-d4-0'");
  EXPECT_TRUE(GetOrDie("b/lagging").current);
}

TEST_F(DerivativeStoreTest, AnEvictionForgetsTheDerivativeAndKeepsWhyForTheNewestHundred) {
  Record(Check(kGguf, kHead1, {{"x_HUBWATCH-a1-0", LagStatus::kLagging}}), 2000);
  const std::string own = advisory::DerivativeAdvisoryId(kGguf, "x_HUBWATCH-a1-0");
  derivatives::Eviction e{.id = kGguf,
                          .relation = Relation::kQuantized,
                          .reason = derivatives::EvictionReason::kRankedOut,
                          .detail = "ranked 201st of 1006 for 200 places",
                          .signals = {0, 0, "2026-05-01T00:00:00.000Z"}};
  ASSERT_TRUE(derivatives().evictions().Evict(kUpstream, {e}, 3000).ok());
  EXPECT_FALSE(derivatives().Get(kUpstream, kGguf)->has_value());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM derivative_lags"), 0);
  AdvisoryOrDie(own);  // published, it stays
  Result<std::vector<derivatives::Eviction>> recent =
      derivatives().evictions().Recent(kUpstream, 10);
  ASSERT_TRUE(recent.ok()) << recent.error().message;
  ASSERT_EQ(recent->size(), 1u);
  EXPECT_EQ((*recent)[0].id, kGguf);
  EXPECT_EQ((*recent)[0].relation, Relation::kQuantized);
  EXPECT_EQ((*recent)[0].reason, derivatives::EvictionReason::kRankedOut);
  EXPECT_EQ((*recent)[0].detail, e.detail);
  EXPECT_EQ((*recent)[0].signals, e.signals);
  EXPECT_EQ((*recent)[0].evicted_at, 3000);

  std::vector<derivatives::Eviction> many;
  for (int i = 0; i < 150; ++i) {
    derivatives::Eviction spam = e;
    spam.id = "spam/copy-" + std::to_string(i);
    spam.reason = derivatives::EvictionReason::kNotFound;
    many.push_back(spam);
  }
  ASSERT_TRUE(derivatives().evictions().Evict(kUpstream, many, 4000).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM derivative_evictions"), DerivativeEvictions::kKept);
  recent = derivatives().evictions().Recent(kUpstream, 1000);
  ASSERT_EQ(recent->size(), static_cast<size_t>(DerivativeEvictions::kKept));
  EXPECT_EQ(recent->front().id, "spam/copy-149") << "the newest first";
  EXPECT_EQ(recent->back().id, "spam/copy-50");
  EXPECT_TRUE(derivatives().evictions().Recent("other/repo", 10)->empty());
  ASSERT_TRUE(store_->repos().RemoveRepo(kUpstream).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM derivative_evictions"), 0);
}

}  // namespace
}  // namespace hubwatch::store
