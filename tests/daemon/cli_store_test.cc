// The store-reading commands (history, changes, advisories, show) against a real store holding
// hostile upstream text, and `advisories --export` against a hostile export directory.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon/commands.h"
#include "tracker/store/store.h"

namespace hubwatch::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kRepo[] = "org/model";
const std::string kSha = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d";
// A commit title and a summary as an attacker would write them: clear the screen, turn red,
// start a fake line, and a C1 CSI.
const std::string kHostile =
    "fix \x1b[2J\x1b[31mred\nfake line \xc2\x9b"
    "0m";

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

// A store with one revision, one change and one advisory, and a config naming it.
class CliStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("hubwatch_cli_store_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    dir_ = fs::canonical(dir_);  // the export refuses a link anywhere in its path: none of ours
    config_ = (dir_ / "hubwatch.json").string();
    std::ofstream(config_) << R"({"store": "hubwatch.db"})";
    Result<std::unique_ptr<store::Store>> store =
        store::Store::Open((dir_ / "hubwatch.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE((*store)->repos().AddRepo({.id = kRepo, .refs = {"main"}}).ok());
    store::RevisionIngest in;
    in.revision = {.repo = kRepo,
                   .sha = kSha,
                   .authored_at = "2026-01-01T00:00:00Z",
                   .title = kHostile,
                   .authors = {"mallory\x1b]0;owned\x07"},
                   .refs = {"main"},
                   .first_seen_at = 1767225600};
    diff::Change change;
    change.kind = diff::ChangeKind::kConfig;
    change.impact = diff::Impact::kBehavioral;
    change.path = "config\x1b[8m.json";
    change.summary = kHostile;
    change.details = {{"unified_diff", "--- a\n+++ b\n+" + kHostile + "\n"}};
    in.changes = {change};
    in.advisories = {{.change_ordinal = 0,
                      .id = "x_HUBWATCH-0000000000000001",
                      .osv = {{"id", "x_HUBWATCH-0000000000000001"}, {"summary", kHostile}},
                      .published = "2026-01-01T00:00:00Z",
                      .modified = "2026-01-01T00:00:00Z"}};
    ASSERT_TRUE((*store)->revisions().Ingest(in).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  Outcome Run(int (*command)(const Args&, std::ostream&, std::ostream&), Args args) {
    args.push_back("--config");
    args.push_back(config_);
    std::ostringstream out, err;
    const int code = command(args, out, err);
    return {code, out.str(), err.str()};
  }

  fs::path dir_;
  std::string config_;
};

// Every line printed is one line of the output: no ESC, no C1 CSI, no newline from upstream.
void ExpectEscaped(const std::string& text) {
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find("\nfake line"), std::string::npos) << text;
  EXPECT_NE(text.find("fix \\x1b[2J\\x1b[31mred\\x0afake line \\u009b0m"), std::string::npos)
      << text;
}

TEST_F(CliStoreTest, TextOutputEscapesUpstreamText) {
  for (auto command : {RunHistory, RunChanges, RunAdvisories}) {
    const Outcome o = Run(command, command == RunAdvisories ? Args{} : Args{kRepo});
    ASSERT_EQ(o.code, 0) << o.err;
    ExpectEscaped(o.out);
  }
  const Outcome show = Run(RunShow, {std::string(kRepo) + "@1a2b"});
  ASSERT_EQ(show.code, 0) << show.err;
  ExpectEscaped(show.out);
  EXPECT_NE(show.out.find("config\\x1b[8m.json"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("by mallory\\x1b]0;owned\\x07\n"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("      +fix \\x1b[2J"), std::string::npos) << show.out;  // the diff
}

// An error quotes at most about 80 bytes of what was typed, escaped (issue 28: `show
// REPO@<100 KB>` printed a 100,050-byte line).
TEST_F(CliStoreTest, ErrorsQuoteArgumentsClippedAndEscaped) {
  const std::string huge(100'000, 'f');
  for (const Outcome& o :
       {Run(RunShow, {std::string(kRepo) + "@" + huge}), Run(RunShow, {huge + "@1a2b"}),
        Run(RunChanges, {kRepo, "--kind", huge}), Run(RunChanges, {kRepo, "--since", huge}),
        Run(RunHistory, {"--" + huge}), Run(RunShow, {std::string(kRepo) + "@\x1b[2J\xe2\x80\xae"})}) {
    EXPECT_NE(o.code, 0);
    EXPECT_LT(o.err.size(), 400u) << o.err.substr(0, 400);
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line";
    EXPECT_EQ(o.err.find('\x1b'), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("\xe2\x80\xae"), std::string::npos) << o.err;
  }
}

// history of a repo hubwatch does not track fails (exit 1) and says how to track it; a tracked
// repo without revisions yet is an empty history (exit 0).
TEST_F(CliStoreTest, HistoryOfAnUntrackedRepoIsAnError) {
  const Outcome untracked = Run(RunHistory, {"nobody/nothing"});
  EXPECT_EQ(untracked.code, 1);
  EXPECT_EQ(untracked.err,
            "hubwatch history: nobody/nothing is not tracked: add it to the configuration's repos, "
            "or POST /api/v1/repos {\"id\": \"...\"} to a running daemon\n");
  EXPECT_EQ(Run(RunHistory, {"nobody/nothing", "--json"}).code, 1);
  {
    Result<std::unique_ptr<store::Store>> store =
        store::Store::Open((dir_ / "hubwatch.db").string());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->repos().AddRepo({.id = "acme/new", .refs = {"main"}}).ok());
  }
  const Outcome fresh = Run(RunHistory, {"acme/new"});
  EXPECT_EQ(fresh.code, 0);
  EXPECT_EQ(fresh.out, "acme/new is tracked; no revision is recorded yet\n");
}

// show takes a tracked ref's name as well as a sha prefix.
TEST_F(CliStoreTest, ShowTakesARefName) {
  {
    Result<std::unique_ptr<store::Store>> store =
        store::Store::Open((dir_ / "hubwatch.db").string());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->repos().SetRefHead(kRepo, "main", kSha, 1767225600).ok());
  }
  const Outcome by_ref = Run(RunShow, {std::string(kRepo) + "@main", "--json"});
  ASSERT_EQ(by_ref.code, 0) << by_ref.err;
  const Outcome by_sha = Run(RunShow, {std::string(kRepo) + "@" + kSha, "--json"});
  EXPECT_EQ(by_ref.out, by_sha.out);
  EXPECT_EQ(Run(RunShow, {std::string(kRepo) + "@nobranch"}).code, 2);
}

TEST_F(CliStoreTest, JsonOutputKeepsTheTextExactly) {
  const Outcome o = Run(RunHistory, {kRepo, "--json"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos);  // JSON escapes C0 controls itself
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j[0]["title"], kHostile);
  EXPECT_EQ(j[0]["changes"][0]["summary"], kHostile);
}

class ExportTest : public CliStoreTest {
 protected:
  Outcome Export(const fs::path& dir, Args extra = {}) {
    Args args = {"--export", dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return Run(RunAdvisories, args);
  }
  static std::string Read(const fs::path& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
};

TEST_F(ExportTest, WritesTheOsvLayout) {
  const fs::path out = dir_ / "osv";
  const Outcome o = Export(out);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(Read(out / "all.json")),
            nlohmann::json::parse(
                R"([{"id": "x_HUBWATCH-0000000000000001", "modified": "2026-01-01T00:00:00Z"}])"));
  EXPECT_EQ(nlohmann::json::parse(Read(out / "x_HUBWATCH-0000000000000001.json"))["summary"],
            kHostile);
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out)) {
    EXPECT_TRUE(entry.is_regular_file()) << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 2u);  // no temporary file left behind
}

TEST_F(ExportTest, ALinkToAnotherFileIsReplacedAndTheOtherFileIsUntouched) {
  const fs::path out = dir_ / "osv";
  fs::create_directories(out);
  const fs::path victim = dir_ / "victim.txt";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, out / "all.json");
  fs::create_symlink(victim, out / "x_HUBWATCH-0000000000000001.json");
  const Outcome o = Export(out);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(Read(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(out / "all.json"));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out / "all.json")));
  EXPECT_FALSE(fs::is_symlink(out / "x_HUBWATCH-0000000000000001.json"));
  EXPECT_TRUE(nlohmann::json::parse(Read(out / "all.json")).is_array());
}

TEST_F(ExportTest, ADanglingLinksTargetIsNotCreated) {
  const fs::path out = dir_ / "osv";
  fs::create_directories(out);
  const fs::path target = dir_ / "created-by-the-export";
  fs::create_symlink(target, out / "all.json");
  const Outcome o = Export(out);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(target)));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out / "all.json")));
}

TEST_F(ExportTest, ADirectoryThatIsALinkIsRefusedUnlessAsked) {
  const fs::path real = dir_ / "real";
  fs::create_directories(real);
  const fs::path link = dir_ / "osv";
  fs::create_directory_symlink(real, link);
  for (const fs::path& given : {link, fs::path(link.string() + "/")}) {
    const Outcome o = Export(given);
    EXPECT_EQ(o.code, 2) << given;
    EXPECT_NE(o.err.find("is a symbolic link; refusing to export through it"), std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find("--follow-dir-symlink"), std::string::npos) << o.err;
    EXPECT_TRUE(fs::is_empty(real));
  }
  const Outcome o = Export(link, {"--follow-dir-symlink"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::is_regular_file(real / "all.json"));
  EXPECT_EQ(Run(RunAdvisories, {"--follow-dir-symlink"}).code, 2);  // without --export
}

// A link anywhere in DIR, not only at its end: "link/sub", "link/.", "link/../x" and a dangling
// link in the middle are refused, name the link, and create or write nothing through it.
TEST_F(ExportTest, ALinkAnywhereInThePathIsRefusedUnlessAsked) {
  const fs::path deep = dir_ / "deep";
  const fs::path real = deep / "real";
  fs::create_directories(real);
  const fs::path link = dir_ / "osv";  // -> deep/real, so link/.. is deep, not dir_
  fs::create_directory_symlink(real, link);
  const fs::path dangling = dir_ / "dangling";  // -> nowhere
  fs::create_directory_symlink(dir_ / "nowhere", dangling);
  fs::create_directories(dir_ / "plain");
  const std::vector<std::pair<std::string, fs::path>> refused = {
      {link.string() + "/sub", link},         // a middle component
      {link.string() + "/.", link},           // the last, with "/." appended
      {link.string() + "/./", link},          //
      {link.string() + "/sub/..", link},      // a middle one, then back out of it
      {link.string() + "/../escaped", link},  // through the link and up: deep/escaped
      {(dir_ / "plain" / ".." / "osv" / "x").string(), dir_ / "plain" / ".." / "osv"},
      {dangling.string() + "/sub", dangling},  // a dangling link: its target not created
  };
  for (const auto& [given, component] : refused) {
    const Outcome o = Export(given);
    EXPECT_EQ(o.code, 2) << given << ": " << o.err;
    EXPECT_NE(o.err.find(component.string() + " (in " + given +
                         ") is a symbolic link; refusing to export through it"),
              std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find("--follow-dir-symlink"), std::string::npos) << o.err;
  }
  EXPECT_TRUE(fs::is_empty(real));
  EXPECT_EQ(std::distance(fs::directory_iterator(deep), fs::directory_iterator()), 1);  // real
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "nowhere")));
  EXPECT_TRUE(fs::is_empty(dir_ / "plain"));

  // Asked to, it follows them; a path without a link needs no flag, ".." included.
  ASSERT_EQ(Export(link.string() + "/sub", {"--follow-dir-symlink"}).code, 0);
  EXPECT_TRUE(fs::is_regular_file(real / "sub" / "all.json"));
  ASSERT_EQ(Export(link.string() + "/.", {"--follow-dir-symlink"}).code, 0);
  EXPECT_TRUE(fs::is_regular_file(real / "all.json"));
  const Outcome up = Export(dir_ / "plain" / ".." / "new" / "." / "osv");
  ASSERT_EQ(up.code, 0) << up.err;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "new" / "osv" / "all.json"));
}

TEST_F(ExportTest, AFileInThePathIsNotADirectory) {
  std::ofstream(dir_ / "file") << "x";
  const Outcome o = Export(dir_ / "file" / "sub");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find((dir_ / "file").string() + " (in "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("is not a directory"), std::string::npos) << o.err;
  EXPECT_EQ(Read(dir_ / "file"), "x");
}

TEST_F(ExportTest, ADirectoryAtADestinationIsAnErrorNotAWriteInside) {
  const fs::path out = dir_ / "osv";
  fs::create_directories(out / "all.json");
  const Outcome o = Export(out);
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("all.json"), std::string::npos) << o.err;
  EXPECT_TRUE(fs::is_empty(out / "all.json"));
}

TEST_F(ExportTest, AnIdThatIsNotAFileNameExportsNothing) {
  {
    Result<std::unique_ptr<store::Store>> store =
        store::Store::Open((dir_ / "hubwatch.db").string());
    ASSERT_TRUE(store.ok());
    store::RevisionIngest in;
    in.revision = {.repo = kRepo, .sha = std::string(40, 'e'), .first_seen_at = 1767225601};
    in.changes = {diff::Change{}};
    in.advisories = {{.id = "../../escaped", .osv = nlohmann::json::object()}};
    ASSERT_TRUE((*store)->revisions().Ingest(in).ok());
  }
  const fs::path out = dir_ / "osv";
  const Outcome o = Export(out);
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("advisory id \"../../escaped\" cannot be a file name"), std::string::npos)
      << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "escaped.json"));
  EXPECT_FALSE(fs::exists(out / "all.json"));
}

}  // namespace
}  // namespace hubwatch::cli
