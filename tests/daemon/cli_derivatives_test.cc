// `hubwatch derivatives REPO`: the table (upstream text escaped for the terminal), the JSON of
// the API, --help, and the errors (untracked repo, no REPO, no --config).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon/commands.h"
#include "tracker/advisory/derivative_osv.h"
#include "tracker/store/store.h"

namespace hubwatch::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kRepo[] = "org/model";
const std::string kSha = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d";
const std::string kHead = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432";
constexpr char kAdvisory[] = "x_HUBWATCH-0000000000000001";
// What upstream and a derivative's owner could write: clear the screen, a fake line.
const std::string kHostileSummary = "eos fixed \x1b[2J\nfake line";
const std::string kHostileId = "mallory/\x1b[31mred";

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

class CliDerivativesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("hubwatch_cli_derivatives_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    config_ = (dir_ / "hubwatch.json").string();
    std::ofstream(config_) << R"({"store": "hubwatch.db"})";
    Result<std::unique_ptr<store::Store>> opened =
        store::Store::Open((dir_ / "hubwatch.db").string());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store::Store& store = **opened;
    ASSERT_TRUE(store.repos().AddRepo({.id = kRepo, .refs = {"main"}}).ok());
    ASSERT_TRUE(store.repos().AddRepo({.id = "org/other", .refs = {"main"}}).ok());
    store::RevisionIngest in;
    in.revision = {.repo = kRepo, .sha = kSha, .refs = {"main"}, .first_seen_at = 1767225600};
    diff::Change change;
    change.kind = diff::ChangeKind::kGenerationConfig;
    change.impact = diff::Impact::kBehavioral;
    change.path = "generation_config.json";
    change.summary = "eos_token_id 128001 -> [128001, 128009]";
    in.changes = {change};
    in.advisories = {{.change_ordinal = 0,
                      .id = kAdvisory,
                      .osv = {{"id", kAdvisory}, {"summary", kHostileSummary}},
                      .published = "2026-01-01T00:00:00Z",
                      .modified = "2026-01-01T00:00:00Z"}};
    ASSERT_TRUE(store.revisions().Ingest(in).ok());
    auto record = [&](const std::string& id, derivatives::LagStatus status,
                      const std::string& error) {
      Status s = store.derivatives().RecordCheck(
          {.upstream = kRepo,
           .id = id,
           .relation = derivatives::Relation::kQuantized,
           .head = kHead,
           .checked_at = 1767312000,  // 2026-01-02
           .error = error,
           .lags = error.empty() ? std::vector<derivatives::AdvisoryLag>{{kAdvisory, status}}
                                 : std::vector<derivatives::AdvisoryLag>{}},
          1767312000);
      ASSERT_TRUE(s.ok()) << s.error().message;
    };
    record(kHostileId, derivatives::LagStatus::kLagging, "");
    record("someone/fixed-gguf", derivatives::LagStatus::kFixed, "");
    record("someone/gated", derivatives::LagStatus::kFixed, "401 \x1b]0;owned\x07");
  }
  void TearDown() override { fs::remove_all(dir_); }

  Outcome Run(Args args, bool with_config = true) {
    if (with_config) {
      args.push_back("--config");
      args.push_back(config_);
    }
    std::ostringstream out, err;
    const int code = RunDerivatives(args, out, err);
    return {code, out.str(), err.str()};
  }

  fs::path dir_;
  std::string config_;
};

TEST_F(CliDerivativesTest, TheTableEscapesWhatUpstreamAndDerivativesWrote) {
  const Outcome o = Run({kRepo});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find('\x07'), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("\nfake line"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.rfind("derivatives of org/model: 3 (2 checked, 1 unchecked): 1 lagging, 1 "
                        "fixed, 0 diverged, 0 not applicable\n",
                        0),
            0u)
      << o.out;
  // Columns as wide as the widest id (escaped).
  EXPECT_NE(o.out.find("\nID                  RELATION   HEAD     CHECKED     FIXED  LAGGING  "
                       "DIVERGED  N/A\n"
                       "mallory/\\x1b[31mred quantized  9f8e7d6  2026-01-02  0      1        0"
                       "         0\n"
                       "    lagging: x_HUBWATCH-0000000000000001  eos fixed \\x1b[2J\\x0afake "
                       "line\n"
                       "someone/fixed-gguf  quantized  9f8e7d6  2026-01-02  1      0        0"
                       "         0\n"
                       // The first check failed: no head, the error.
                       "someone/gated       quantized  -        2026-01-02  0      0        0"
                       "         0\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("    error: 401 \\x1b]0;owned\\x07\n"), std::string::npos) << o.out;
}

TEST_F(CliDerivativesTest, JsonIsWhatTheApiServes) {
  const Outcome o = Run({kRepo, "--json"});
  ASSERT_EQ(o.code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["repo"], kRepo);
  ASSERT_EQ(j["derivatives"].size(), 3u);
  const nlohmann::json& lagging = j["derivatives"][0];
  EXPECT_EQ(lagging["id"], kHostileId);  // exact: JSON escapes it
  EXPECT_EQ(lagging["relation"], "quantized");
  EXPECT_EQ(lagging["head"], kHead);
  EXPECT_EQ(lagging["checked_at"], "2026-01-02T00:00:00Z");
  EXPECT_EQ(lagging["advisories"],
            nlohmann::json::array({{{"id", kAdvisory},
                                    {"status", "lagging"},
                                    {"derivative_advisory",
                                     advisory::DerivativeAdvisoryId(kHostileId, kAdvisory)}}}));
  EXPECT_FALSE(lagging.contains("error"));
  EXPECT_EQ(j["derivatives"][2]["error"], "401 \x1b]0;owned\x07");
  EXPECT_EQ(j["counts"]["lagging"], 1);
  EXPECT_EQ(j["counts"]["derivatives"], 3);

  const Outcome none = Run({"org/other", "--json"});
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(nlohmann::json::parse(none.out)["derivatives"], nlohmann::json::array());
  const Outcome table = Run({"org/other"});
  EXPECT_EQ(table.out,
            "derivatives of org/other: 0 (0 checked): 0 lagging, 0 fixed, 0 diverged, 0 not "
            "applicable\n");
}

TEST_F(CliDerivativesTest, HelpAndErrors) {
  const Outcome help = Run({"--help"}, /*with_config=*/false);
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.out.rfind("usage: hubwatch derivatives REPO --config FILE [--json]\n", 0), 0u)
      << help.out;

  const Outcome untracked = Run({"org/\x1b[2Jgone"});
  EXPECT_EQ(untracked.code, 2);
  EXPECT_EQ(untracked.out, "");
  EXPECT_EQ(untracked.err, "hubwatch derivatives: repo org/\\x1b[2Jgone is not tracked\n");

  EXPECT_EQ(Run({}).code, 2);
  EXPECT_EQ(Run({kRepo, "org/other"}).code, 2);
  EXPECT_EQ(Run({kRepo, "--bogus"}).code, 2);
  const Outcome no_config = Run({kRepo}, /*with_config=*/false);
  EXPECT_EQ(no_config.code, 2);
  EXPECT_EQ(no_config.err, "hubwatch derivatives: --config FILE is required\n");
}

}  // namespace
}  // namespace hubwatch::cli
