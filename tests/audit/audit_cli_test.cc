// `hubwatch audit` run in-process (RunAudit) over the API tests' store (tests/api/api_env.h):
// judged through --config and through a real ApiServer on loopback (--server), the same
// answers when a tree pins more distinct revisions than one /v1/querybatch may carry; and
// --since-last's write never follows a link planted beside its file.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "daemon/commands.h"
#include "tests/api/api_env.h"

namespace hubwatch::api::testing {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
};

class AuditCliTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    dir_ = fs::path(::testing::TempDir()) /
           ("hubwatch_audit_cli_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tree");
    config_ = (dir_ / "hubwatch.json").string();
    std::ofstream(config_) << nlohmann::json{{"store", db_path_}}.dump();
  }
  void TearDown() override {
    fs::remove_all(dir_);
    ApiTest::TearDown();
  }

  static Outcome Audit(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    const int status = cli::RunAudit(args, out, err);
    return {status, out.str(), err.str()};
  }
  // Ingests `n` new head revisions of `repo`, each the child of the one before (through the
  // test's own connection); every 100th carries one behavioral advisory.
  void IngestChain(const std::string& repo, int n) {
    std::string parent = Revisions(repo).front().sha;
    for (int i = 0; i < n; ++i) {
      store::RevisionIngest in;
      in.revision.repo = repo;
      in.revision.sha = std::string(32, 'd') + std::to_string(10'000'000 + i);
      in.revision.parents = {parent};
      in.revision.authored_at = "2024-12-04T10:00:00.000Z";
      in.revision.title = "Update chat template";
      in.revision.first_seen_at = kServerNow;
      if (i % 100 == 0) {
        diff::Change c{diff::ChangeKind::kChatTemplate, diff::Impact::kBehavioral,
                       "tokenizer_config.json", "chat template edit " + std::to_string(i)};
        advisory::AdvisoryContext ctx;
        ctx.repo = repo;
        ctx.revision = in.revision.sha;
        ctx.parent = parent;
        ctx.introduced = parent;
        ctx.published = "2024-12-04T10:00:00Z";
        ctx.modified = "2024-12-05T13:12:35Z";
        nlohmann::json osv = advisory::BuildOsv(c, ctx);
        in.advisories.push_back({.change_ordinal = 0,
                                 .id = osv["id"],
                                 .osv = osv,
                                 .published = ctx.published,
                                 .modified = ctx.modified});
        in.changes.push_back(std::move(c));
      }
      in.ref_heads = {{"main", in.revision.sha}};
      auto outcome = inspect().revisions().Ingest(in);
      ASSERT_TRUE(outcome.ok()) << outcome.error().message;
      parent = in.revision.sha;
    }
  }
  std::string Tree() const { return (dir_ / "tree").string(); }
  std::string Server() const { return "http://127.0.0.1:" + std::to_string(port_); }
  static std::string Slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
  std::string config_;
};

TEST_F(AuditCliTest, MorePinsThanOneBatchTakesAreJudgedByTheServerAsByTheStore) {
  // 1,100 revisions beyond the fixture's (some with an advisory): more distinct pins than the
  // 1,000 one /v1/querybatch may carry.
  IngestChain(kMistral, 1100);
  std::vector<std::pair<std::string, std::string>> pins;  // (repo, sha)
  for (const char* repo : {kLlama, kMistral}) {
    for (const store::RevisionRecord& r : Revisions(repo)) pins.emplace_back(repo, r.sha);
  }
  ASSERT_GT(pins.size(), 1000u);
  // 2,500 references over five files, each revision at least twice.
  constexpr size_t kReferences = 2500;
  ASSERT_LE(2 * pins.size(), kReferences);
  std::vector<std::string> files(5);
  for (size_t i = 0; i < kReferences; ++i) {
    const auto& [repo, sha] = pins[i % pins.size()];
    files[i % files.size()] += repo + "@" + sha + "\n";
  }
  for (size_t f = 0; f < files.size(); ++f) {
    std::ofstream(dir_ / "tree" / ("deploy-" + std::to_string(f) + ".hfpins")) << files[f];
  }
  StartServer();

  const Outcome local = Audit({Tree(), "--config", config_, "--json"});
  const Outcome remote = Audit({Tree(), "--server", Server(), "--json"});
  ASSERT_NE(local.status, 2) << local.err;
  ASSERT_NE(remote.status, 2) << remote.err;
  EXPECT_EQ(local.status, remote.status);
  nlohmann::json by_store = nlohmann::json::parse(local.out);
  nlohmann::json by_server = nlohmann::json::parse(remote.out);
  ASSERT_EQ(by_store["references"].size(), kReferences);
  std::multiset<std::string> verdicts;
  for (const nlohmann::json& r : by_store["references"]) verdicts.insert(r["verdict"]);
  EXPECT_GT(verdicts.count("affected"), 0u);
  EXPECT_GT(verdicts.count("current"), 0u);
  by_store["summary"].erase("judged_by");
  by_server["summary"].erase("judged_by");
  EXPECT_EQ(by_store, by_server);
}

TEST_F(AuditCliTest, SinceLastReplacesItsFileAndNeverFollowsALinkPlantedBesideIt) {
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "precious\n";
  const fs::path state = dir_ / "last-audit";
  fs::create_symlink(victim, dir_ / "last-audit.tmp");

  const Outcome first = Audit({Tree(), "--config", config_, "--since-last", state.string()});
  EXPECT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(Slurp(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(state));
  const std::string written = Slurp(state);
  EXPECT_TRUE(std::regex_match(written, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n)")))
      << written;
  // The next audit reads the time this one wrote, and writes its own.
  const Outcome second = Audit({Tree(), "--config", config_, "--since-last", state.string()});
  EXPECT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(Slurp(victim), "precious\n");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(state)));
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_NE(e.path().filename().string().rfind(".hubwatch-tmp-", 0), 0u) << e.path();
  }
}

}  // namespace
}  // namespace hubwatch::api::testing
