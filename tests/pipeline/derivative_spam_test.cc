// Issue 28, item 2: spam derivatives must not freeze monitoring of the real ones. Against
// fakehub's derivative fixtures plus a real fine-tune with no downloads ("quiet"), with 1,000
// throwaway children of the upstream made newer than all of them: the round ranks what it lists
// by downloads, likes and age, follows a stored derivative the listing no longer shows by its
// own request, and evicts - saying why - what it stops following.

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "tests/pipeline/derivative_env.h"

namespace hubwatch::pipeline {
namespace {

using derivatives::EvictionReason;

constexpr char kUpstream[] = "meta-llama/Meta-Llama-3-8B-Instruct";
constexpr char kQuiet[] = "aardvark-lab/Llama-3-8B-Instruct-quiet-ft";  // 0 downloads, 0 likes
const std::set<std::string> kReal = {
    "aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT",
    "tidewater-ml/Llama-3-8B-Instruct-Tidewater",
    "larkspur-nlp/Llama-3-8B-Instruct-Larkspur-DPO",
    "pinegrove-research/llama-3-8b-instruct-sql-lora",
    "fernhollow-quants/Meta-Llama-3-8B-Instruct-GGUF",
    "copperleaf-merges/Llama-3-8B-Instruct-Base-SLERP",
    kQuiet,
};

std::string Upload(const std::string& name) {
  std::ifstream in(std::string(HUBWATCH_FIXTURES_DIR) +
                   "/hub/meta-llama/Meta-Llama-3-8B-Instruct/files/v1/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool IsSpam(const std::string& id) { return id.starts_with("throwaway-"); }

class DerivativeSpamTest : public PipelineTest {
 protected:
  void SetUp() override {
    fixtures_dirs_ = {std::string(HUBWATCH_FIXTURES_DIR) + "/hub-derivatives"};
    fakehub::Repo meta;
    meta.id = kQuiet;
    meta.created_at = "2024-05-02T00:00:00.000Z";
    meta.library_name = "transformers";
    meta.tags = {std::string("base_model:") + kUpstream,
                 std::string("base_model:finetune:") + kUpstream};
    fakehub::RepoBuilder builder(std::move(meta));
    fakehub::RepoBuilder::CommitSpec upload;
    upload.title = "Upload";
    upload.authors = {"someone"};
    upload.date = "2024-05-02T00:00:00.000Z";
    upload.add = {
        {"config.json", fakehub::MakeInlineBlob(Upload("config.json"))},
        {"tokenizer_config.json", fakehub::MakeInlineBlob(Upload("tokenizer_config.json"))}};
    ASSERT_TRUE(builder.AddCommit(std::move(upload)).ok());
    extra_repos_.push_back(std::move(builder).Build());
    PipelineTest::SetUp();
    Track(kUpstream);
    PollOnce(kUpstream);
    ASSERT_TRUE(LoadFixFacets(*store_, kUpstream).ok());
  }

  // The input the daemon builds from the store (DerivativeWatch::StartRound).
  DerivativeRoundInput Input(size_t max, size_t follow_budget = 50) {
    DerivativeRoundInput input;
    input.upstream = kUpstream;
    input.relations = {derivatives::Relation::kFinetune, derivatives::Relation::kAdapter,
                       derivatives::Relation::kQuantized, derivatives::Relation::kMerge};
    input.max = max;
    input.follow_budget = follow_budget;
    auto stored = store_->derivatives().List(kUpstream);
    EXPECT_TRUE(stored.ok());
    for (const derivatives::DerivativeRecord& r : *stored) {
      if (r.error.empty() && !r.head.empty()) input.checked_heads[r.id] = r.head;
      input.known[r.id] = {r.relation, r.signals, r.last_modified, r.listed_at};
    }
    return input;
  }

  // A check of `id` read now, with no lags.
  derivatives::DerivativeCheck Check(const std::string& id, derivatives::Relation relation,
                                     const std::string& head) const {
    derivatives::DerivativeCheck check;
    check.upstream = kUpstream;
    check.id = id;
    check.relation = relation;
    check.head = head;
    check.checked_at = now_;
    check.facets_json = "{}";
    return check;
  }

  // One round, stored as the daemon stores it (without classifying: statuses are tested
  // elsewhere).
  DerivativeRound Round(size_t max, size_t follow_budget = 50) {
    DerivativeRound round = RunDerivativeRound(io_, stack_->client(), Input(max, follow_budget));
    EXPECT_FALSE(round.listing_error) << round.listing_error->ToString();
    ++now_;
    for (const DerivativeRead& read : round.reads) {
      derivatives::DerivativeCheck check = Check(read.id, read.relation, read.head);
      check.last_modified = read.last_modified;
      check.facets_json = read.facets ? "{}" : "";
      check.error = read.facets ? "" : read.error;
      check.signals = read.signals;
      Status s = store_->derivatives().RecordCheck(check, now_);
      EXPECT_TRUE(s.ok()) << s.error().message;
    }
    std::vector<store::DerivativeSighting> seen;
    for (const std::string& id : round.unchanged) seen.push_back({id, round.seen.at(id), {}});
    EXPECT_TRUE(store_->derivatives().MarkListed(kUpstream, seen, now_).ok());
    EXPECT_TRUE(store_->derivatives().evictions().Evict(kUpstream, round.evicted, now_).ok());
    return round;
  }

  std::set<std::string> Stored() {
    std::set<std::string> ids;
    Result<std::vector<derivatives::DerivativeRecord>> list = store_->derivatives().List(kUpstream);
    EXPECT_TRUE(list.ok());
    for (const derivatives::DerivativeRecord& r : list.value()) ids.insert(r.id);
    return ids;
  }
};

std::set<std::string> ReadIds(const DerivativeRound& round) {
  std::set<std::string> ids;
  for (const DerivativeRead& r : round.reads) ids.insert(r.id);
  return ids;
}

TEST_F(DerivativeSpamTest, AThousandNewerSpamChildrenLeaveEveryRealDerivativeFollowed) {
  DerivativeRound first = Round(200);
  EXPECT_EQ(ReadIds(first), kReal);
  ASSERT_TRUE(fakehub_->AddSpamChildren(kUpstream, 1000, "adapter").ok());

  DerivativeRound second = Round(200);
  const std::set<std::string> unchanged(second.unchanged.begin(), second.unchanged.end());
  for (const std::string& id : kReal) EXPECT_EQ(unchanged.count(id), 1u) << id;
  EXPECT_TRUE(second.evicted.empty());
  EXPECT_EQ(second.followed, 0u) << "listed by downloads, every real one is on the first page";
  // The adapter listing's first page: the real LoRA, then 199 throwaways; 193 fill the places
  // left, the other 6 are never stored.
  EXPECT_EQ(second.reads.size(), 193u);
  for (const DerivativeRead& read : second.reads) {
    EXPECT_TRUE(IsSpam(read.id)) << read.id;
    EXPECT_EQ(read.source, "none") << "a README: nothing to read";
  }
  EXPECT_EQ(second.not_admitted, 6u);
  EXPECT_EQ(second.requests, 4) << "one page per relation, whatever the spam";
  EXPECT_EQ(Stored().size(), 200u);
  // What the Hub said of each: the ranking's signals are stored.
  auto gguf =
      store_->derivatives().Get(kUpstream, "fernhollow-quants/Meta-Llama-3-8B-Instruct-GGUF");
  ASSERT_TRUE(gguf.ok() && gguf->has_value());
  EXPECT_EQ((*gguf)->signals, (derivatives::Signals{48210, 96, "2024-04-18T19:58:02.000Z"}));
}

TEST_F(DerivativeSpamTest, AStoredDerivativeTheListingNoLongerShowsIsFollowedByItsOwnRequest) {
  Round(200);
  // Spam fine-tunes as quiet as kQuiet but newer: past the listing's first page it goes
  // (the Hub breaks the tie among zero downloads its own way; fakehub by id, descending).
  ASSERT_TRUE(fakehub_->AddSpamChildren(kUpstream, 1000, "finetune").ok());
  fakehub_->ClearLog();
  DerivativeRound round = Round(200);
  EXPECT_EQ(std::count(round.listed.begin(), round.listed.end(), kQuiet), 0);
  EXPECT_EQ(round.followed, 1u);
  EXPECT_NE(std::find(round.unchanged.begin(), round.unchanged.end(), kQuiet),
            round.unchanged.end())
      << "its head has not moved: nothing more to read";
  EXPECT_EQ(round.requests, 5);
  std::vector<std::string> own;
  for (const fakehub::LoggedRequest& r : fakehub_->RequestLog()) {
    if (r.path.starts_with("/api/models/")) own.push_back(r.path);
  }
  EXPECT_EQ(own, (std::vector<std::string>{std::string("/api/models/") + kQuiet}));
  EXPECT_EQ(round.seen.at(kQuiet).created_at, "2024-05-02T00:00:00.000Z");
  for (const derivatives::Eviction& e : round.evicted) {
    EXPECT_TRUE(IsSpam(e.id)) << e.id << ": " << e.detail;
  }

  // It moves: the next round reads it at its new head.
  std::string head;
  ASSERT_TRUE(
      fakehub_
          ->PushCommit(kQuiet, {{"generation_config.json", "{\"eos_token_id\": 1}"}}, "sync", &head)
          .ok());
  round = Round(200);
  ASSERT_EQ(ReadIds(round).count(kQuiet), 1u);
  for (const DerivativeRead& read : round.reads) {
    if (read.id != kQuiet) continue;
    EXPECT_EQ(read.head, head);
    EXPECT_TRUE(read.facets) << read.error;
    EXPECT_EQ(read.source, "files");
  }

  // Past the follow budget it keeps what it has, for a later round.
  round = Round(200, /*follow_budget=*/0);
  EXPECT_EQ(round.followed, 0u);
  EXPECT_EQ(round.deferred, 1u);
  EXPECT_EQ(ReadIds(round).count(kQuiet), 0u);
  EXPECT_EQ(Stored().count(kQuiet), 1u);

  // Deleted on the Hub: evicted, with why.
  ASSERT_TRUE(fakehub_->DeleteRepo(kQuiet).ok());
  round = Round(200);
  ASSERT_FALSE(round.evicted.empty());
  const derivatives::Eviction* gone = nullptr;
  for (const derivatives::Eviction& e : round.evicted) {
    if (e.id == kQuiet) gone = &e;
  }
  ASSERT_NE(gone, nullptr);
  EXPECT_EQ(gone->reason, EvictionReason::kNotFound);
  EXPECT_EQ(gone->detail.rfind("its own request: not found", 0), 0u) << gone->detail;
  EXPECT_EQ(Stored().count(kQuiet), 0u);
  auto recorded = store_->derivatives().evictions().Recent(kUpstream, 1000);
  ASSERT_TRUE(recorded.ok());
  EXPECT_TRUE(std::any_of(recorded->begin(), recorded->end(),
                          [](const derivatives::Eviction& e) { return e.id == kQuiet; }));
}

TEST_F(DerivativeSpamTest, AStoredRepoNoLongerTaggedAsADerivativeIsEvictedUntagged) {
  // Stored as a fine-tune of kUpstream, but tagged as Llama 3.1's on the Hub.
  const std::string other = "emberfield/Llama-3.1-8B-Emberfield-ChatML";
  ASSERT_TRUE(
      store_->derivatives()
          .RecordCheck(Check(other, derivatives::Relation::kFinetune, std::string(40, 'e')), now_)
          .ok());
  ASSERT_TRUE(fakehub_->AddSpamChildren(kUpstream, 1000, "finetune").ok());  // incomplete
  DerivativeRound round = Round(200);
  ASSERT_EQ(round.evicted.size(), 1u);
  EXPECT_EQ(round.evicted[0].id, other);
  EXPECT_EQ(round.evicted[0].reason, EvictionReason::kUntagged);
  EXPECT_EQ(round.evicted[0].detail,
            std::string("its own request: no longer tagged base_model:finetune:") + kUpstream);
}

TEST_F(DerivativeSpamTest, StoredSpamRankedBelowTheMaxIsEvictedWithWhy) {
  ASSERT_TRUE(fakehub_->AddSpamChildren(kUpstream, 1000, "adapter").ok());
  Round(200);
  ASSERT_EQ(Stored().size(), 200u);
  DerivativeRound round = Round(10);
  std::set<std::string> evicted;
  for (const derivatives::Eviction& e : round.evicted) {
    evicted.insert(e.id);
    EXPECT_TRUE(IsSpam(e.id)) << e.id;
    EXPECT_EQ(e.reason, EvictionReason::kRankedOut);
    EXPECT_NE(e.detail.find("for 10 places: 0 downloads, 0 likes, created 20"), std::string::npos)
        << e.detail;
  }
  EXPECT_EQ(evicted.size(), 190u);
  const std::set<std::string> stored = Stored();
  EXPECT_EQ(stored.size(), 10u);
  for (const std::string& id : kReal) EXPECT_EQ(stored.count(id), 1u) << id;
  auto recorded = store_->derivatives().evictions().Recent(kUpstream, 1000);
  ASSERT_TRUE(recorded.ok());
  EXPECT_EQ(recorded->size(), static_cast<size_t>(store::DerivativeEvictions::kKept));
}

TEST_F(DerivativeSpamTest, OneACompleteListingNoLongerShowsIsEvictedUnlisted) {
  Round(200);
  ASSERT_TRUE(store_->derivatives()
                  .RecordCheck(Check("someone/retagged-copy", derivatives::Relation::kMerge,
                                     std::string(40, 'f')),
                               now_)
                  .ok());
  DerivativeRound round = Round(200);
  EXPECT_TRUE(round.complete);
  ASSERT_EQ(round.evicted.size(), 1u);
  EXPECT_EQ(round.evicted[0].id, "someone/retagged-copy");
  EXPECT_EQ(round.evicted[0].reason, EvictionReason::kUnlisted);
  EXPECT_EQ(round.evicted[0].relation, derivatives::Relation::kMerge);
  EXPECT_EQ(round.followed, 0u) << "a complete listing needs no follow-up";
}

}  // namespace
}  // namespace hubwatch::pipeline
