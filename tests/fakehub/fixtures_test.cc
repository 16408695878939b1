// The fixture loader and repo model: every fixture loads, synthesized safetensors headers are
// exact, virtual content is deterministic, and self-contradicting fixtures are refused.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "estimator/formats/safetensors_header.h"
#include "tests/fakehub/fixture_loader.h"
#include "tests/fakehub/hashing.h"
#include "tests/fakehub/hub_state.h"
#include "tests/fakehub/synthetic.h"

namespace hubwatch::fakehub {
namespace {

const std::string kDir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";

const Repo& Find(const std::vector<Repo>& repos, const std::string& id) {
  for (const Repo& r : repos) {
    if (r.id == id) return r;
  }
  ADD_FAILURE() << "no fixture " << id;
  static Repo none;
  return none;
}

TEST(Fixtures, AllIncidentReposLoad) {
  auto repos = LoadFixtureRepos(kDir);
  ASSERT_TRUE(repos.ok()) << repos.error().message;
  std::set<std::string> ids;
  for (const Repo& r : *repos) ids.insert(r.id);
  for (const char* id : {"meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-8B",
                         "meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3",
                         "google/gemma-7b-it", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
                         "microsoft/Phi-3-mini-4k-instruct", "google/gemma-2-9b-it"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
  const Repo& f4 = Find(*repos, "mistralai/Mistral-7B-Instruct-v0.3");
  EXPECT_EQ(f4.commits.size(), 7u);
  int template_changes = 0;
  for (size_t i = 1; i < f4.commits.size(); ++i) {
    const auto& before = *f4.commits[i - 1].files;
    const auto& after = *f4.commits[i].files;
    if (before.count("tokenizer_config.json") &&
        before.at("tokenizer_config.json") != after.at("tokenizer_config.json")) {
      ++template_changes;
    }
  }
  EXPECT_EQ(template_changes, 5) << "F4: five template commits";
}

TEST(Fixtures, Gemma2ShardsHaveTheRealTensorsAndExactHeaders) {
  auto repo = LoadFixtureRepo(kDir + "/google/gemma-2-9b-it/repo.json");
  ASSERT_TRUE(repo.ok()) << repo.error().message;
  const FileMap& files = *repo->commits.back().files;
  uint64_t params = 0, data_bytes = 0;
  std::set<std::string> names;
  for (int i = 1; i <= 4; ++i) {
    const BlobPtr& blob = files.at("model-0000" + std::to_string(i) + "-of-00004.safetensors");
    ASSERT_EQ(blob->kind, BlobKind::kSafetensors);
    // The header our own parser accepts, read back from the virtual file's first bytes.
    std::string prefix(blob->safetensors_prefix.size(), '\0');
    blob->Read(0, prefix.size(), prefix.data());
    auto length = ReadSafetensorsHeaderLength(prefix);
    ASSERT_TRUE(length.ok());
    EXPECT_EQ(*length % 8, 0u) << "padded to 8 like the Rust writer";
    auto header = ParseSafetensorsHeader(std::string_view(prefix).substr(8, *length), blob->size);
    ASSERT_TRUE(header.ok()) << header.error().message;
    EXPECT_EQ(8 + *length + header->data_size, blob->size);
    for (const auto& [name, t] : header->tensors) {
      names.insert(name);
      params += t.elements;
    }
    data_bytes += header->data_size;
    EXPECT_EQ(blob->pointer_size, blob->lfs_pointer.size());
    EXPECT_NE(blob->lfs_pointer.find("oid sha256:" + blob->sha256), std::string::npos);
  }
  EXPECT_EQ(names.size(), 464u);
  EXPECT_TRUE(names.count("model.layers.0.pre_feedforward_layernorm.weight"));
  EXPECT_FALSE(names.count("lm_head.weight"));
  EXPECT_EQ(params, 9'241'705'984u);
  EXPECT_EQ(data_bytes, 18'483'411'968u);
  // The index agrees with the shards.
  const BlobPtr& index = files.at("model.safetensors.index.json");
  EXPECT_NE(index->inline_content.find("\"total_size\": 18483411968"), std::string::npos);
}

TEST(Fixtures, VirtualContentIsDeterministicAndRangeConsistent) {
  auto blob = MakeLfsBlob(1 << 20, std::string(64, 'a'), 7);
  std::string whole(1 << 20, '\0');
  blob->Read(0, whole.size(), whole.data());
  std::string middle(1000, '\0');
  blob->Read(12345, middle.size(), middle.data());
  EXPECT_EQ(middle, whole.substr(12345, 1000));
  auto other = MakeLfsBlob(1 << 20, std::string(64, 'b'), 8);
  std::string head(64, '\0');
  other->Read(0, 64, head.data());
  EXPECT_NE(head, whole.substr(0, 64)) << "another seed, other bytes";
}

TEST(Fixtures, GitIdsAreRealGitIds) {
  // `printf 'hello\n' | git hash-object --stdin`
  EXPECT_EQ(GitBlobOid("hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
  // git mktree with that blob as "hello.txt"
  EXPECT_EQ(GitTreeOid({{"hello.txt", false, "ce013625030ba8dba906f756967f9e9ca394464a"}}),
            "aaa96ced2d9a1c8e72c56b253a0e2fe78393feb7");
  EXPECT_EQ(MakeInlineBlob("hello\n")->blob_oid, "ce013625030ba8dba906f756967f9e9ca394464a");
}

class BadFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("fakehub-bad-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "files");
    std::ofstream(dir_ / "files" / "a.json") << "{}";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Result<Repo> Load(const std::string& json) {
    std::ofstream(dir_ / "repo.json") << json;
    return LoadFixtureRepo(dir_ / "repo.json");
  }
  std::filesystem::path dir_;
};

TEST_F(BadFixture, ContradictionsAreRefusedWithAReason) {
  const std::string head =
      R"({"id":"x/y","commits":[{"title":"one","date":"2024-01-01T00:00:00.000Z",)";
  struct Case {
    std::string json;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {head + R"("change":{"a.json":"files/a.json"}}]})", "which does not exist"},
           {head + R"("delete":["nope"]}]})", "which does not exist"},
           {head + R"("add":{"a.json":"files/missing.json"}}]})", "cannot read"},
           {head + R"("add":{"w":{"lfs":{"size":1}}}}]})", "lfs needs size and sha256"},
           {R"({"id":"x/y","commits":[{"title":"t","date":"yesterday"}]})", "not ISO-8601"},
           {R"({"id":"x/y","commits":[]})", "non-empty"},
           {R"({"id":"x/y","commits":[{"title":"a","date":"2024-01-02T00:00:00Z"},)"
            R"({"title":"b","date":"2024-01-01T00:00:00Z"}]})",
            "dated before its parent"},
           {"not json", "invalid JSON"},
       }) {
    auto repo = Load(c.json);
    ASSERT_FALSE(repo.ok()) << c.json;
    EXPECT_NE(repo.error().message.find(c.message), std::string::npos) << repo.error().message;
  }
}

TEST(Safetensors, DeclaredSizeMustMatchAndDtypesMustBeKnown) {
  SafetensorsManifest m;
  m.sha256 = std::string(64, '0');
  m.tensors = {{"w", "", {4, 4}}};
  auto blob = MakeSafetensorsBlob(m);
  ASSERT_TRUE(blob.ok());
  m.declared_size = (*blob)->size + 1;
  EXPECT_FALSE(MakeSafetensorsBlob(m).ok());
  m.declared_size.reset();
  m.tensors[0].dtype = "F33";
  EXPECT_FALSE(MakeSafetensorsBlob(m).ok());
  m.tensors[0].dtype = "";
  m.sha256 = "short";
  EXPECT_FALSE(MakeSafetensorsBlob(m).ok());
}

TEST(Synthetic, GeneratesNDeterministicRepos) {
  SyntheticOptions options;
  options.repos = 20;
  options.commits = 4;
  auto a = GenerateSyntheticRepos(options);
  auto b = GenerateSyntheticRepos(options);
  ASSERT_EQ(a.size(), 20u);
  EXPECT_EQ(a[7].id, "synthetic/model-00007");
  EXPECT_EQ(a[7].commits.size(), 4u);
  EXPECT_EQ(a[7].commits.back().id, b[7].commits.back().id);
  EXPECT_NE(a[7].commits.back().id, a[8].commits.back().id);
  EXPECT_TRUE(a[0].commits.back().files->count("model.safetensors"));
}

}  // namespace
}  // namespace hubwatch::fakehub

// The control endpoints, driven through HubState without a socket (the wire tests cover GETs).
namespace hubwatch::fakehub {
namespace {

FakeResponse Call(HubState& state, std::string method, std::string path, std::string body = "") {
  FakeRequest request;
  request.method = std::move(method);
  request.path = std::move(path);
  request.body = std::move(body);
  return state.Handle(request);
}

TEST(ControlEndpoint, FaultsAndMutationsByJson) {
  SyntheticOptions s;
  s.repos = 2;
  HubState state(FakeHubOptions{}, GenerateSyntheticRepos(s));
  state.SetOrigins("http://127.0.0.1:1", "http://127.0.0.2:1");
  EXPECT_EQ(Call(state, "GET", "/api/models/synthetic/model-00000/refs").status, 200);
  FakeResponse added =
      Call(state, "POST", "/_fakehub/faults",
           R"([{"action":"status","status":500,"path":"model-00000/refs","times":1},)"
           R"({"action":"gate","repo":"synthetic/model-00001","mode":"manual"}])");
  EXPECT_EQ(added.status, 200) << added.body;
  EXPECT_EQ(Call(state, "GET", "/api/models/synthetic/model-00000/refs").status, 500);
  EXPECT_EQ(Call(state, "GET", "/api/models/synthetic/model-00000/refs").status, 200);
  FakeResponse gated = Call(state, "HEAD", "/synthetic/model-00001/resolve/main/config.json");
  EXPECT_EQ(gated.status, 401);
  EXPECT_EQ(Call(state, "POST", "/_fakehub/faults",
                 R"({"action":"rename","repo":"synthetic/model-00000","to":"renamed/model"})")
                .status,
            200);
  FakeResponse moved = Call(state, "GET", "/api/models/synthetic/model-00000/refs");
  EXPECT_EQ(moved.status, 307);
  EXPECT_EQ(
      Call(state, "POST", "/_fakehub/faults", R"({"action":"super_squash","repo":"renamed/model"})")
          .status,
      200);
  FakeResponse commits = Call(state, "GET", "/api/models/renamed/model/commits/main");
  EXPECT_NE(commits.body.find("Super-squash"), std::string::npos);
  EXPECT_EQ(
      Call(state, "POST", "/_fakehub/faults", R"({"action":"delete_repo","repo":"renamed/model"})")
          .status,
      200);
  EXPECT_EQ(Call(state, "GET", "/api/models/renamed/model/refs").status, 401);
  EXPECT_EQ(Call(state, "POST", "/_fakehub/faults", R"({"action":"nonsense"})").status, 400);
  EXPECT_EQ(Call(state, "POST", "/_fakehub/faults", "not json").status, 400);
  EXPECT_EQ(Call(state, "DELETE", "/_fakehub/faults").status, 200);
  FakeResponse log = Call(state, "GET", "/_fakehub/log");
  EXPECT_NE(log.body.find("\"status\":307"), std::string::npos);
}

TEST(ControlEndpoint, ReplayClockAdvances) {
  FakeHubOptions options;
  options.mode = Mode::kReplay;
  options.speed = 0;
  SyntheticOptions s;
  s.commits = 3;  // one hour apart
  HubState state(options, GenerateSyntheticRepos(s));
  state.SetOrigins("http://127.0.0.1:1", "http://127.0.0.2:1");
  auto total = [&] {
    FakeResponse r = Call(state, "GET", "/api/models/synthetic/model-00000/commits/main");
    for (const auto& [k, v] : r.headers) {
      if (k == "X-Total-Count") return v;
    }
    return std::string("none");
  };
  EXPECT_EQ(total(), "1");
  EXPECT_EQ(Call(state, "POST", "/_fakehub/clock", R"({"advance_seconds": 3600})").status, 200);
  EXPECT_EQ(total(), "2");
  state.AdvanceReplayClock(std::chrono::hours(5));
  EXPECT_EQ(total(), "3");
}

}  // namespace
}  // namespace hubwatch::fakehub
