// One meaning of "since" (a revision, or a commit time) and of "affects", whether a person asks
// the CLI or the HTTP API: the same store, the same question, the same answer.

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "daemon/commands.h"
#include "tests/api/api_env.h"

namespace hubwatch::api::testing {
namespace {

class SinceTest : public ApiTest {
 protected:
  // The ids a CLI command prints with --json, run against this test's store.
  std::set<std::string> CliIds(int (*command)(const cli::Args&, std::ostream&, std::ostream&),
                               cli::Args args) {
    const std::string config = db_path_ + ".json";
    std::ofstream(config) << nlohmann::json({{"store", db_path_}}).dump();
    args.insert(args.end(), {"--json", "--config", config});
    std::ostringstream out, err;
    EXPECT_EQ(command(args, out, err), 0) << err.str();
    std::set<std::string> ids;
    for (const auto& item : nlohmann::json::parse(out.str(), nullptr, false)) {
      ids.insert(item["id"].is_string() ? item["id"].get<std::string>() : item["id"].dump());
    }
    return ids;
  }

  std::set<std::string> ApiIds(const std::string& target, const char* list) {
    HttpResponse r = Get(target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    std::set<std::string> ids;
    const nlohmann::json body = r.json();
    for (const auto& item : body[list]) {
      ids.insert(item["id"].is_string() ? item["id"].get<std::string>() : item["id"].dump());
    }
    return ids;
  }
};

TEST_F(SinceTest, TheSameSinceGivesTheSameAnswerFromTheCliAndTheApi) {
  StartServer();
  const std::vector<store::RevisionRecord> revs = Revisions(kMistral);  // newest first
  ASSERT_GE(revs.size(), 4u);
  const std::string sha = revs[2].sha.substr(0, 9);
  const std::string date = revs[1].authored_at.substr(0, 10);
  const std::string repo_path = std::string("/api/v1/repos/") + kMistral;
  for (const std::string& since : {sha, date, revs[1].authored_at}) {
    SCOPED_TRACE(since);
    const std::set<std::string> changes =
        CliIds(cli::RunChanges, {kMistral, "--since", since});
    EXPECT_FALSE(changes.empty());
    EXPECT_EQ(changes, ApiIds(repo_path + "/changes?since=" + since, "changes"));
    const std::set<std::string> advisories =
        CliIds(cli::RunAdvisories, {kMistral, "--since", since});
    EXPECT_FALSE(advisories.empty());
    EXPECT_EQ(advisories, ApiIds(std::string("/api/v1/advisories?repo=") + kMistral +
                                     "&since=" + since,
                                 "advisories"));
  }
  // "Which advisories affect my pin": the oldest revision is affected by every advisory whose
  // state it has; the newest by none.
  const std::string oldest = revs.back().sha, newest = revs.front().sha;
  const std::set<std::string> affects_oldest =
      CliIds(cli::RunAdvisories, {kMistral, "--affects", oldest.substr(0, 7)});
  EXPECT_FALSE(affects_oldest.empty());
  EXPECT_EQ(affects_oldest, ApiIds(std::string("/api/v1/advisories?repo=") + kMistral +
                                       "&affects=" + oldest,
                                   "advisories"));
  EXPECT_TRUE(CliIds(cli::RunAdvisories, {kMistral, "--affects", newest}).empty());
  EXPECT_TRUE(ApiIds(std::string("/api/v1/advisories?repo=") + kMistral + "&affects=main",
                     "advisories")
                  .empty());
}

}  // namespace
}  // namespace hubwatch::api::testing
