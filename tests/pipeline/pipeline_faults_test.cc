// The pipeline under adversity: bad data from the Hub, a Hub that fails mid-poll, and a process
// that dies between fetching a revision and committing it.

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "tests/fakehub/repo_model.h"
#include "tests/pipeline/pipeline_env.h"

namespace hubwatch::pipeline {
namespace {

const std::string kRepo = "acme/bad-files";

fakehub::BlobPtr Safetensors(uint64_t seed, const std::string& sha_char) {
  fakehub::SafetensorsManifest m;
  m.tensors = {{"model.embed_tokens.weight", "", {32, 8}}, {"model.norm.weight", "", {8}}};
  m.seed = seed;
  m.sha256 = std::string(64, sha_char[0]);
  auto blob = fakehub::MakeSafetensorsBlob(m);
  EXPECT_TRUE(blob.ok());
  return blob.ok() ? *blob : nullptr;
}

// The same header, but lying about its offsets: the first tensor claims more bytes than its
// shape holds.
fakehub::BlobPtr LyingSafetensors() {
  auto good = Safetensors(7, "d");
  auto lying = std::make_shared<fakehub::FileBlob>(*good);
  const std::string honest = "\"data_offsets\":[0,512]";
  const size_t at = lying->safetensors_prefix.find(honest);
  EXPECT_NE(at, std::string::npos) << lying->safetensors_prefix;
  lying->safetensors_prefix.replace(at, honest.size(), "\"data_offsets\":[0,520]");
  return lying;
}

fakehub::Repo BadFilesRepo() {
  fakehub::Repo meta;
  meta.id = kRepo;
  meta.created_at = "2024-01-01T00:00:00.000Z";
  fakehub::RepoBuilder b(std::move(meta));
  const std::string config =
      R"({"model_type": "llama", "vocab_size": 32, "hidden_size": 8, "intermediate_size": 16,)"
      R"( "num_hidden_layers": 1, "num_attention_heads": 2, "torch_dtype": "bfloat16"})";
  fakehub::RepoBuilder::CommitSpec upload;
  upload.title = "upload";
  upload.date = "2024-01-02T00:00:00.000Z";
  upload.add = {
      {"config.json", fakehub::MakeInlineBlob(config)},
      {"tokenizer.json",
       fakehub::MakeInlineBlob(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})")},
      {"model.safetensors", Safetensors(1, "a")}};
  EXPECT_TRUE(b.AddCommit(std::move(upload)).ok());
  fakehub::RepoBuilder::CommitSpec breakage;
  breakage.title = "break everything";
  breakage.date = "2024-01-03T00:00:00.000Z";
  breakage.change = {{"config.json", fakehub::MakeInlineBlob("{\"model_type\": ")},
                     {"tokenizer.json", fakehub::MakeInlineBlob("[1, 2, 3]")},
                     {"model.safetensors", LyingSafetensors()}};
  EXPECT_TRUE(b.AddCommit(std::move(breakage)).ok());
  return std::move(b).Build();
}

class PipelineFaultsTest : public PipelineTest {
 protected:
  void SetUp() override {
    extra_repos_.push_back(BadFilesRepo());
    PipelineTest::SetUp();
  }
};

TEST_F(PipelineFaultsTest, BadDataBecomesErrorChangesNotAStuckRepo) {
  Track(kRepo);
  const PollReport r = PollOnce(kRepo);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.revisions, 2);
  std::set<std::string> errors;
  for (const store::ChangeRecord& c : Changes(kRepo)) {
    if (c.change.kind == diff::ChangeKind::kError) errors.insert(c.change.path);
  }
  EXPECT_EQ(errors, (std::set<std::string>{"config.json", "tokenizer.json", "model.safetensors"}));
  // The cursor moved past the bad revision: the next poll is one request and ingests nothing.
  const PollReport again = PollOnce(kRepo);
  EXPECT_TRUE(again.ok);
  EXPECT_EQ(again.revisions, 0);
  EXPECT_EQ(again.stats.requests, 1);
}

TEST_F(PipelineTest, AFailingHubStopsThePollAndTheNextOneResumes) {
  Track("microsoft/Phi-3-mini-4k-instruct");
  fakehub::FaultRule rule;
  rule.path_regex = "/tree/";
  rule.status = 500;
  fakehub_->AddFault(rule);
  const PollReport failed = PollOnce("microsoft/Phi-3-mini-4k-instruct");
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.state, store::RepoState::kErroring);
  EXPECT_EQ(failed.revisions, 0);
  const auto repo = store_->repos().GetRepo("microsoft/Phi-3-mini-4k-instruct");
  EXPECT_EQ((*repo)->consecutive_errors, 1);
  EXPECT_EQ(failed.consecutive_errors, 1);  // the scheduler's backoff starts from it
  EXPECT_FALSE(
      store_->repos().GetRefHead("microsoft/Phi-3-mini-4k-instruct", "main")->has_value());

  fakehub_->ClearFaults();
  const PollReport resumed = PollOnce("microsoft/Phi-3-mini-4k-instruct");
  ASSERT_TRUE(resumed.ok) << resumed.error;
  EXPECT_EQ(resumed.revisions, 3);
  EXPECT_EQ((*store_->repos().GetRepo("microsoft/Phi-3-mini-4k-instruct"))->consecutive_errors,
            0);
}

// Every row of the tables that must match between a crashed-and-restarted run and a clean one.
std::string Dump(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::string out;
  for (const char* sql :
       {"SELECT repo, sha, parents, title, ingest_order, rewritten_away FROM revisions ORDER BY 1, "
        "5",
        "SELECT repo, sha, path, oid FROM manifests ORDER BY 1, 2, 3",
        "SELECT repo, sha, ordinal, kind, impact, path, summary, details FROM changes ORDER BY 1, "
        "2, 3",
        "SELECT id, repo, sha, kind, osv FROM advisories ORDER BY 1",
        "SELECT repo, ref, sha FROM ref_heads ORDER BY 1, 2", "SELECT oid FROM blobs ORDER BY 1",
        "SELECT repo, sha, params_total, parameter_delta FROM estimates ORDER BY 1, 2"}) {
    out += std::string("# ") + sql + "\n";
    sqlite3_exec(
        db, sql,
        [](void* arg, int n, char** values, char**) {
          auto* s = static_cast<std::string*>(arg);
          for (int i = 0; i < n; ++i) *s += std::string(values[i] ? values[i] : "NULL") + "|";
          *s += "\n";
          return 0;
        },
        &out, nullptr);
  }
  sqlite3_close(db);
  return out;
}

// A child process polls and dies (_exit, no cleanup) just before committing its third
// revision. Restarted, the poll finishes, and the store equals a clean run's: nothing lost,
// nothing twice, and the catch-up the crash cut short is still the repo's first (its commits,
// all from before the repo was tracked, are history in both runs).
TEST_F(PipelineTest, CrashBetweenFetchAndCommitLosesAndRepeatsNothing) {
  const std::string repo = "meta-llama/Meta-Llama-3-8B-Instruct";
  Track(repo, {"main"}, now_);
  const std::string crashed_db = db_path_;
  poller_.reset();
  store_.reset();
  stack_.reset();  // the child builds its own client; nothing of ours runs in it
  fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    boost::asio::io_context io;
    hub::HubStack stack(io, ClientOptions());
    auto store = store::Store::Open(crashed_db);
    if (!store.ok()) std::_Exit(10);
    int commits = 0;
    PollerOptions options;
    options.clock = &clock_;
    options.before_commit = [&](const std::string&, const std::string&) {
      if (++commits == 3) std::_Exit(42);  // dies with two revisions committed
    };
    Poller poller(stack.client(), **store, options);
    poller.Poll(repo, [](PollReport) { std::_Exit(11); });  // must not get here
    io.run();
    std::_Exit(12);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 42);

  OpenStore();
  stack_ = std::make_unique<hub::HubStack>(io_, ClientOptions());
  EXPECT_EQ(Revisions(repo).size(), 2u);
  const PollReport resumed = PollOnce(repo);
  ASSERT_TRUE(resumed.ok) << resumed.error;
  EXPECT_EQ(resumed.revisions, 3);
  const std::string after_crash = Dump(crashed_db);

  // The clean run, into a fresh database.
  db_path_ = crashed_db + ".clean.db";
  RemoveDb();
  OpenStore();
  Track(repo, {"main"}, now_);
  ASSERT_TRUE(PollOnce(repo).ok);
  EXPECT_EQ(Dump(db_path_), after_crash);
  EXPECT_NE(after_crash.find("\"backfill\":true"), std::string::npos);
  RemoveDb();
  db_path_ = crashed_db;
}

}  // namespace
}  // namespace hubwatch::pipeline
