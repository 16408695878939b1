// The advisory step: which changes of a revision get an advisory, what each says (ids, parent,
// introduced, times), where it is delivered, and when a burst holds it back.

#include "tracker/pipeline/advisory_step.h"

#include <gtest/gtest.h>

#include "tests/pipeline/step_test_support.h"
#include "tracker/advisory/osv.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::pipeline {
namespace {

constexpr char kRepo[] = "acme/model";
const std::string kSha(40, 'b');
const std::string kParent(40, 'a');
constexpr int64_t kNow = 1733145155;  // 2024-12-02T13:12:35Z

store::RevisionIngest Revision(std::vector<diff::Change> changes) {
  store::RevisionIngest in;
  in.revision.repo = kRepo;
  in.revision.sha = kSha;
  in.revision.parents = {kParent};
  in.revision.authored_at = "2024-12-02T12:00:00.000Z";
  in.revision.first_seen_at = kNow;
  in.changes = std::move(changes);
  return in;
}

// The lookup: where each change's path was last changed, and which changes were asked about.
struct Introduced {
  std::map<std::string, std::string> by_path;
  std::vector<std::string> asked;
  IntroducedLookup Lookup() {
    return [this](const diff::Change& c) -> Result<std::optional<std::string>> {
      asked.push_back(std::string(diff::KindName(c.kind)) + ":" + c.path);
      if (c.path == "broken") return Error::Io("database is locked");
      auto it = by_path.find(c.path);
      return it == by_path.end() ? std::nullopt : std::optional(it->second);
    };
  }
};

// Tracked before every commit here: every change is news.
constexpr int64_t kTrackedLongAgo = 0;

TEST(AdvisoryStep, OneAdvisoryPerChangeWorthIt) {
  store::RevisionIngest in =
      Revision({MakeChange(diff::ChangeKind::kConfig, diff::Impact::kBehavioral, "config.json"),
                MakeChange(diff::ChangeKind::kFiles, diff::Impact::kCosmetic, "README.md"),
                MakeChange(diff::ChangeKind::kConfig, diff::Impact::kBreaking, "config.json")});
  Introduced introduced;
  introduced.by_path["config.json"] = std::string(40, 'c');
  ASSERT_TRUE(AdviseRevision(in, PollerOptions{}, kTrackedLongAgo, introduced.Lookup()).ok());

  ASSERT_EQ(in.advisories.size(), 2u);  // the cosmetic change is not advised
  EXPECT_EQ(introduced.asked,
            (std::vector<std::string>{"config:config.json", "config:config.json"}));
  const store::NewAdvisory& first = in.advisories[0];
  const store::NewAdvisory& second = in.advisories[1];
  EXPECT_EQ(first.change_ordinal, 0);
  EXPECT_EQ(second.change_ordinal, 2);
  // Two changes of one kind and path: told apart by their ordinal among them.
  EXPECT_EQ(first.id,
            advisory::AdvisoryId(kRepo, kSha, diff::ChangeKind::kConfig, "config.json", 0));
  EXPECT_EQ(second.id,
            advisory::AdvisoryId(kRepo, kSha, diff::ChangeKind::kConfig, "config.json", 1));
  EXPECT_EQ(first.osv["id"], first.id);
  EXPECT_EQ(first.published, advisory::Rfc3339(kNow));
  EXPECT_EQ(first.modified, first.published);
  EXPECT_EQ(first.osv["published"], first.published);
  EXPECT_EQ(first.osv["database_specific"]["parent"], kParent);
  EXPECT_EQ(first.osv["database_specific"]["committed_at"], "2024-12-02T12:00:00.000Z");
  EXPECT_EQ(first.osv["affected"][0]["ranges"][0]["events"][0]["introduced"], std::string(40, 'c'));
  EXPECT_TRUE(first.targets.empty());
  EXPECT_FALSE(in.settle_at);  // no window: published as ingested
}

TEST(AdvisoryStep, CosmeticChangesAreAdvisedWhenAskedAndTargetsComeFromTheOptions) {
  store::RevisionIngest in =
      Revision({MakeChange(diff::ChangeKind::kFiles, diff::Impact::kCosmetic, "README.md")});
  in.revision.parents.clear();  // the first revision
  PollerOptions options;
  options.advise_cosmetic = true;
  options.outbox_targets = [](const std::string& repo, const diff::Change& c, bool history) {
    EXPECT_FALSE(history);
    return std::vector<std::string>{"subscription:1", repo + "/" + c.path};
  };
  Introduced introduced;
  ASSERT_TRUE(AdviseRevision(in, options, kTrackedLongAgo, introduced.Lookup()).ok());
  ASSERT_EQ(in.advisories.size(), 1u);
  EXPECT_EQ(in.advisories[0].targets,
            (std::vector<std::string>{"subscription:1", "acme/model/README.md"}));
  EXPECT_EQ(in.advisories[0].osv["database_specific"]["parent"], "");
  EXPECT_EQ(in.advisories[0].osv["affected"][0]["ranges"][0]["events"][0]["introduced"], "0");
}

TEST(AdvisoryStep, AnEstimateAdvisoryCarriesItsFigures) {
  diff::Change estimate = MakeChange(diff::ChangeKind::kEstimate, diff::Impact::kBehavioral, "");
  estimate.details["figures"] = {{"params_total", {{"old", 1}, {"new", 2}}}};
  store::RevisionIngest in = Revision({estimate});
  Introduced introduced;
  ASSERT_TRUE(AdviseRevision(in, PollerOptions{}, kTrackedLongAgo, introduced.Lookup()).ok());
  ASSERT_EQ(in.advisories.size(), 1u);
  EXPECT_EQ(in.advisories[0].osv["database_specific"]["estimate_delta"],
            estimate.details["figures"]);
}

TEST(AdvisoryStep, TheSettleTimeCountsFromTheCommitNeverFromTheFuture) {
  PollerOptions options;
  options.settle_window_s = 600;
  Introduced introduced;
  store::RevisionIngest in = Revision({});
  ASSERT_TRUE(AdviseRevision(in, options, kTrackedLongAgo, introduced.Lookup()).ok());
  EXPECT_EQ(in.settle_at, advisory::ParseTime("2024-12-02T12:10:00Z"));

  in = Revision({});
  in.revision.authored_at = "2030-01-01T00:00:00Z";  // a commit date ahead of the clock
  ASSERT_TRUE(AdviseRevision(in, options, kTrackedLongAgo, introduced.Lookup()).ok());
  EXPECT_EQ(in.settle_at, kNow + 600);

  in = Revision({});
  in.revision.authored_at = "";  // no date: from now
  ASSERT_TRUE(AdviseRevision(in, options, kTrackedLongAgo, introduced.Lookup()).ok());
  EXPECT_EQ(in.settle_at, kNow + 600);
}

TEST(AdvisoryStep, ACommitFromBeforeTheRepoWasTrackedIsHistory) {
  PollerOptions options;
  std::vector<bool> asked;
  options.outbox_targets = [&](const std::string&, const diff::Change&, bool history) {
    asked.push_back(history);
    return std::vector<std::string>{"subscription:1"};
  };
  Introduced introduced;
  const diff::Change change =
      MakeChange(diff::ChangeKind::kConfig, diff::Impact::kBehavioral, "config.json");
  const int64_t committed = *advisory::ParseTime("2024-12-02T12:00:00Z");

  // Tracked after the commit: history, published all the same and marked as such.
  store::RevisionIngest in = Revision({change});
  ASSERT_TRUE(AdviseRevision(in, options, committed + 1, introduced.Lookup()).ok());
  ASSERT_EQ(in.advisories.size(), 1u);
  EXPECT_EQ(in.advisories[0].osv["database_specific"]["backfill"], true);
  // Tracked at the commit's second or before it: news.
  in = Revision({change});
  ASSERT_TRUE(AdviseRevision(in, options, committed, introduced.Lookup()).ok());
  ASSERT_EQ(in.advisories.size(), 1u);
  EXPECT_FALSE(in.advisories[0].osv["database_specific"].contains("backfill"));
  EXPECT_EQ(asked, (std::vector<bool>{true, false}));

  // No commit date: its first-seen time decides, which is never before tracking.
  EXPECT_FALSE(IsHistory("", kNow, kNow));
  EXPECT_TRUE(IsHistory("2024-01-01T00:00:00+02:00", kNow, 1704067200));  // 2024-01-01T00:00Z
}

TEST(AdvisoryStep, ALookupErrorIsTheStepsError) {
  store::RevisionIngest in =
      Revision({MakeChange(diff::ChangeKind::kConfig, diff::Impact::kBehavioral, "broken")});
  Introduced introduced;
  Status s = AdviseRevision(in, PollerOptions{}, kTrackedLongAgo, introduced.Lookup());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "database is locked");
}

}  // namespace
}  // namespace hubwatch::pipeline
