// Committing a revision: the ingest built from the commit and its snapshots (changes, history
// rewrite, estimate, advisories, ref cursor), one Store::Ingest, and what it reports for the log.
// A SQLite store in memory; no network.

#include "tracker/pipeline/revision_commit.h"

#include <gtest/gtest.h>

#include "tests/estimator/test_util.h"
#include "tests/pipeline/step_test_support.h"
#include "tracker/pipeline/git_blob.h"

namespace hubwatch::pipeline {
namespace {

using hubwatch::testing::ReadFixture;

constexpr char kRepo[] = "acme/model";
constexpr int64_t kNow = 1733145155;

Snapshot WithConfig(std::string sha, std::string config) {
  Snapshot s;
  s.sha = std::move(sha);
  s.manifest.push_back(
      {.path = "config.json", .git_oid = GitBlobOid(config), .size = config.size()});
  s.files["config.json"] = std::move(config);
  return s;
}

hub::CommitInfo CommitOf(std::string id, std::string title) {
  return {.id = std::move(id), .title = std::move(title), .date = "2024-12-02T12:00:00.000Z"};
}

class RevisionCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_ = MemoryStoreTracking(kRepo));
    options_.log = [this](std::string_view line) { log_.emplace_back(line); };
  }

  CommittedRevision Commit(const hub::CommitInfo& commit, const Snapshot* base,
                           const Snapshot& current, const Rewrite* rewrite = nullptr) {
    NewContent fresh;
    for (const auto& [path, content] : current.files) fresh.blobs[GitBlobOid(content)] = content;
    return CommitRevision(*store_, {kRepo, "main", &commit, base, &current, &fresh, rewrite}, kNow,
                          options_);
  }

  std::unique_ptr<store::Store> store_;
  PollerOptions options_;
  std::vector<std::string> log_;
};

TEST_F(RevisionCommitTest, TheFirstRevisionIsIngestedWithItsEstimateAndMovesTheRef) {
  const std::string sha(40, '1');
  std::vector<std::string> hooked;
  options_.before_commit = [&](const std::string& repo, const std::string& s) {
    hooked.push_back(repo + "@" + s);
  };
  const Snapshot first = WithConfig(sha, ReadFixture("models/openai-community__gpt2.config.json"));
  const CommittedRevision c = Commit(CommitOf(sha, "initial commit"), nullptr, first);
  ASSERT_EQ(c.error, "");
  EXPECT_TRUE(c.ingested);
  // The initial upload: nothing before it to change, so no change and no advisory.
  EXPECT_EQ(c.changes, 0);
  EXPECT_EQ(c.advisories, 0);
  EXPECT_FALSE(c.held);
  EXPECT_EQ(hooked, std::vector<std::string>{std::string(kRepo) + "@" + sha});
  EXPECT_EQ(c.lines, std::vector<std::string>{
                         "acme/model@1111111 \"initial commit\": 0 change(s), 0 advisory(ies)"});
  auto advisories = store_->advisories().ListAdvisories({.repo = kRepo});
  ASSERT_TRUE(advisories.ok());
  EXPECT_TRUE(advisories->empty());

  EXPECT_EQ(store_->repos().GetRefHead(kRepo, "main").value(), sha);
  EXPECT_TRUE(store_->revisions().GetBlob(first.manifest[0].git_oid).value());
  auto estimate = store_->revisions().LatestEstimate(kRepo);
  ASSERT_TRUE(estimate.ok() && *estimate);
  EXPECT_FALSE((*estimate)->UnavailableReason());

  // The same revision again (a crash after the commit): already there, nothing repeated.
  const CommittedRevision again = Commit(CommitOf(sha, "initial commit"), nullptr, first);
  EXPECT_EQ(again.error, "");
  EXPECT_FALSE(again.ingested);
}

TEST_F(RevisionCommitTest, AnUploadAfterAnEmptyInitialCommitIsNoChangeEither) {
  const std::string empty_sha(40, 'e'), upload_sha(40, 'f');
  Snapshot empty;  // the Hub's "initial commit": .gitattributes alone
  empty.sha = empty_sha;
  empty.manifest.push_back(
      {.path = ".gitattributes", .git_oid = GitBlobOid("*.bin lfs"), .size = 9});
  EXPECT_FALSE(HoldsModelFiles(nullptr));
  EXPECT_FALSE(HoldsModelFiles(&empty));
  ASSERT_EQ(Commit(CommitOf(empty_sha, "initial commit"), nullptr, empty).error, "");
  const Snapshot upload = WithConfig(upload_sha, R"({"model_type": "mamba", "vocab_size": 5})");
  EXPECT_TRUE(HoldsModelFiles(&upload));
  const CommittedRevision c = Commit(CommitOf(upload_sha, "Upload folder"), &empty, upload);
  ASSERT_EQ(c.error, "");
  EXPECT_TRUE(c.ingested);
  EXPECT_EQ(c.changes, 0);
  EXPECT_EQ(c.advisories, 0);
}

TEST_F(RevisionCommitTest, TheNextRevisionDiffsAgainstItsParentAndAHeldBurstSaysSo) {
  const std::string a(40, 'a'), b(40, 'b');
  const Snapshot first = WithConfig(a, R"({"model_type": "mamba", "vocab_size": 5})");
  ASSERT_EQ(Commit(CommitOf(a, "one"), nullptr, first).error, "");
  // The estimator cannot read this config: the estimate is recorded unavailable, and logged.
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0].rfind("no estimate for acme/model@aaaaaaa: ", 0), 0u) << log_[0];

  options_.settle_window_s = 600;
  const Snapshot second = WithConfig(b, R"({"model_type": "mamba", "vocab_size": 6})");
  const CommittedRevision c = Commit(CommitOf(b, "two"), &first, second);
  ASSERT_EQ(c.error, "");
  EXPECT_TRUE(c.ingested);
  EXPECT_EQ(c.changes, 1);
  EXPECT_EQ(c.advisories, 1);
  EXPECT_TRUE(c.held);
  EXPECT_EQ(c.lines[0],
            "acme/model@bbbbbbb \"two\": 1 change(s), 1 advisory(ies) held while the "
            "burst settles");
  auto revision = store_->revisions().GetRevision(kRepo, b);
  ASSERT_TRUE(revision.ok() && *revision);
  EXPECT_EQ((*revision)->parents, std::vector<std::string>{a});
  EXPECT_EQ(store_->repos().GetRefHead(kRepo, "main").value(), b);
  EXPECT_TRUE(store_->advisories().HasHeldAdvisories(kRepo).value());
}

TEST_F(RevisionCommitTest, ARewriteIsRecordedOnceWithTheRevisionsItLeftBehind) {
  const std::string a(40, 'a'), c(40, 'c');
  const Snapshot old = WithConfig(a, "{}");
  ASSERT_EQ(Commit(CommitOf(a, "old line"), nullptr, old).error, "");
  const Rewrite rewrite{.previous_head = a, .rewritten_away = {a}, .new_history_length = 1};
  const CommittedRevision squashed =
      Commit(CommitOf(c, "squash"), nullptr, WithConfig(c, "{}"), &rewrite);
  ASSERT_EQ(squashed.error, "");
  auto changes = store_->revisions().ChangesOf(kRepo, c);
  ASSERT_TRUE(changes.ok());
  ASSERT_FALSE(changes->empty());
  const diff::Change& history = (*changes)[0].change;
  EXPECT_EQ(history.kind, diff::ChangeKind::kHistory);
  EXPECT_EQ(history.impact, diff::Impact::kBreaking);
  EXPECT_EQ(history.summary,
            "main rewritten: previous head aaaaaaa is gone; 1 revision(s) no longer reachable, "
            "the new history has 1 commit(s)");
  EXPECT_EQ(history.details["new_head"], c);
  EXPECT_EQ(history.details["rewritten_away"], nlohmann::json::array({a}));
  auto old_revision = store_->revisions().GetRevision(kRepo, a);
  ASSERT_TRUE(old_revision.ok() && *old_revision);
  EXPECT_TRUE((*old_revision)->rewritten_away);
}

TEST_F(RevisionCommitTest, AStoreFailureIsTheCommitsErrorAndNothingIsWritten) {
  const std::string sha(40, 'd');
  options_.before_commit = [this](const std::string&, const std::string&) {
    ASSERT_TRUE(
        store_->repos().RemoveRepo(kRepo).ok());  // the revision now has no repo to belong to
  };
  const CommittedRevision c = Commit(CommitOf(sha, "orphan"), nullptr, WithConfig(sha, "{}"));
  EXPECT_NE(c.error, "");
  EXPECT_FALSE(c.ingested);
  EXPECT_FALSE(store_->revisions().HasRevision(kRepo, sha).value());
}

}  // namespace
}  // namespace hubwatch::pipeline
