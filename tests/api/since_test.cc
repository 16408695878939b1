// One meaning of "since" (a revision, or a commit time) and of "affects", whether a person asks
// the CLI or the HTTP API: the same store, the same question, the same answer.

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

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

  // What a CLI command prints (exit status, stdout, stderr) against the store, or with --api
  // against this test's server.
  std::tuple<int, std::string, std::string> Cli(
      int (*command)(const cli::Args&, std::ostream&, std::ostream&), cli::Args args, bool api) {
    if (api) {
      args.insert(args.end(), {"--api", "http://127.0.0.1:" + std::to_string(port_)});
    } else {
      const std::string config = db_path_ + ".json";
      std::ofstream(config) << nlohmann::json({{"store", db_path_}}).dump();
      args.insert(args.end(), {"--config", config});
    }
    std::ostringstream out, err;
    const int code = command(args, out, err);
    return {code, out.str(), err.str()};
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

// --api URL: the query commands ask a running daemon and print what they print from its store.
TEST_F(SinceTest, TheQueryCommandsPrintTheSameFromTheStoreAndFromTheApi) {
  StartServer();
  const std::vector<store::RevisionRecord> revs = Revisions(kMistral);
  ASSERT_GE(revs.size(), 3u);
  const std::string sha = revs[2].sha.substr(0, 9);
  const std::vector<std::pair<int (*)(const cli::Args&, std::ostream&, std::ostream&), cli::Args>>
      asked = {
          {cli::RunChanges, {kMistral, "--since", sha}},
          {cli::RunChanges,
           {kMistral, "--since", "2024-01-01", "--kind", "chat_template", "--json"}},
          {cli::RunAdvisories, {kMistral, "--since", sha}},
          {cli::RunAdvisories, {kMistral, "--affects", sha, "--json"}},
          {cli::RunAdvisories, {"--json"}},
          {cli::RunHistory, {kMistral}},
          {cli::RunHistory, {kMistral, "--json"}},
      };
  for (const auto& [command, args] : asked) {
    std::string shown;
    for (const std::string& a : args) shown += a + " ";
    SCOPED_TRACE(shown);
    const auto [local_code, local_out, local_err] = Cli(command, args, false);
    const auto [api_code, api_out, api_err] = Cli(command, args, true);
    EXPECT_EQ(local_code, 0) << local_err;
    EXPECT_EQ(api_code, 0) << api_err;
    EXPECT_FALSE(local_out.empty());
    EXPECT_EQ(api_out, local_out);
  }
  // An untracked repo is the same answer (exit 1) both ways; a bad URL is bad input.
  EXPECT_EQ(std::get<0>(Cli(cli::RunHistory, {"nobody/nothing"}, false)), 1);
  EXPECT_EQ(std::get<0>(Cli(cli::RunHistory, {"nobody/nothing"}, true)), 1);
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunChanges({kMistral, "--api", "ftp://127.0.0.1:1"}, out, err), 2);
  EXPECT_NE(err.str().find("is not http(s)://host[:port]"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace hubwatch::api::testing
