// Issue 18's fake Hub side: GGUF manifests synthesized into exact GGUF bytes (checked against the
// estimator's test writer and scanner), a fixture GGUF served like any LFS file and read the way
// a derivative check reads it (an 8 MiB Range through the CDN redirect), several fixture
// directories served together, and the derivative fixtures listed per base_model relation.

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "estimator/formats/gguf_header.h"
#include "tests/estimator/gguf_writer.h"
#include "tests/fakehub/fakehub.h"
#include "tests/fakehub/fixture_loader.h"
#include "tests/fakehub/gguf_blob.h"
#include "tests/fakehub/hub_state.h"
#include "tracker/hub/curl_transport.h"

extern char** environ;

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kHub = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
const std::string kDerivatives = std::string(HUBWATCH_FIXTURES_DIR) + "/hub-derivatives";
const std::string kL3 = "meta-llama/Meta-Llama-3-8B-Instruct";
const std::string kGgufRepo = "fernhollow-quants/Meta-Llama-3-8B-Instruct-GGUF";

std::string Prefix(const FileBlob& blob, size_t n) {
  std::string out(n, '\0');
  blob.Read(0, n, out.data());
  return out;
}

std::string ManifestWith(const json& metadata, const json& tensors, uint64_t size) {
  return json{{"seed", 5},
              {"sha256", std::string(64, 'c')},
              {"size", size},
              {"metadata", metadata},
              {"tensors", tensors}}
      .dump();
}

TEST(GgufBlob, KeyValuesAreByteForByteWhatTheTestWriterWrites) {
  const json metadata = {
      {"general.architecture", "string", "llama"},
      {"llama.context_length", "u32", 8192},
      {"tokenizer.ggml.add_bos_token", "bool", true},
      {"tokenizer.ggml.tokens",
       "string_array_generated",
       {{"count", 5}, {"named", {{"3", "<|eot_id|>"}}}, {"filler", "t{i}"}}},
      {"tokenizer.ggml.token_type",
       "i32_array_generated",
       {{"count", 5}, {"fill", 1}, {"ranges", {{3, 5, 3}}}}},
      {"tokenizer.ggml.scores", "i32_array", {-1, 0, 7}},
  };
  const std::string expected =
      hubwatch::testing::GgufWriter()
          .String("general.architecture", "llama")
          .U32("llama.context_length", 8192)
          .Bool("tokenizer.ggml.add_bos_token", true)
          .Strings("tokenizer.ggml.tokens", {"t0", "t1", "t2", "<|eot_id|>", "t4"})
          .I32s("tokenizer.ggml.token_type", {1, 1, 1, 3, 3})
          .I32s("tokenizer.ggml.scores", {-1, 0, 7})
          .Build();
  const uint64_t padded = (expected.size() + 31) / 32 * 32;
  Result<BlobPtr> blob = MakeGgufBlob(ManifestWith(metadata, json::array(), padded));
  ASSERT_TRUE(blob.ok()) << blob.error().message;
  EXPECT_EQ((*blob)->kind, BlobKind::kGguf);
  EXPECT_EQ((*blob)->size, padded);
  const std::string bytes = Prefix(**blob, padded);
  EXPECT_EQ(bytes.substr(0, expected.size()), expected);
  EXPECT_EQ(bytes.substr(expected.size()), std::string(padded - expected.size(), '\0'));
  EXPECT_TRUE((*blob)->is_lfs());
  EXPECT_NE((*blob)->lfs_pointer.find("size " + std::to_string(padded)), std::string::npos);
}

TEST(GgufBlob, TensorsAreAlignedAndTheDataRegionIsVirtual) {
  const json metadata = {{"general.alignment", "u32", 64}};
  // Q4_K: 256 elements in 144 bytes; F32: 4 bytes each.
  const json tensors = {{{"name", "a"}, {"type", 12}, {"shape", {256, 3}}},
                        {{"name", "norm"}, {"type", "F32"}, {"shape", {5}}}};
  Result<BlobPtr> wrong = MakeGgufBlob(ManifestWith(metadata, tensors, 1));
  ASSERT_FALSE(wrong.ok());
  const std::string message = wrong.error().message;
  const size_t at = message.find("make ");
  ASSERT_NE(at, std::string::npos) << message;
  const uint64_t size = std::stoull(message.substr(at + 5));
  Result<BlobPtr> blob = MakeGgufBlob(ManifestWith(metadata, tensors, size));
  ASSERT_TRUE(blob.ok()) << blob.error().message;
  const uint64_t prefix = (*blob)->prefix_size();
  EXPECT_EQ(prefix % 64, 0u);
  EXPECT_EQ(size, prefix + 448 /* 432 padded */ + 64 /* 20 padded */);
  Result<GgufScan> scan = ScanGgufMetadata(Prefix(**blob, prefix));
  ASSERT_TRUE(scan.ok()) << scan.error().message;
  EXPECT_TRUE(scan->complete);
  EXPECT_EQ(scan->metadata.tensor_count, 2u);
  // The second tensor's info ends in its offset: 448, the first one's size padded to 64.
  const std::string infos = Prefix(**blob, prefix);
  const size_t norm = infos.rfind("norm");
  uint64_t offset = 0;
  for (int i = 0; i < 8; ++i)
    offset |= uint64_t{static_cast<unsigned char>(infos[norm + 4 + 4 + 8 + 4 + i])} << (8 * i);
  EXPECT_EQ(offset, 448u);
  std::string tail(100, '\0'), whole(size, '\0');
  (*blob)->Read(size - 100, 100, tail.data());
  (*blob)->Read(0, size, whole.data());
  EXPECT_EQ(tail, whole.substr(size - 100)) << "range reads agree with the whole file";
}

TEST(GgufBlob, ContradictionsAreErrorsThatSayWhere) {
  auto error = [](const json& metadata, const json& tensors = json::array()) {
    Result<BlobPtr> blob = MakeGgufBlob(ManifestWith(metadata, tensors, 32));
    return blob.ok() ? std::string("loaded") : blob.error().message;
  };
  EXPECT_NE(error({{"k", "u8", 256}}).find("k is not a u8"), std::string::npos);
  EXPECT_NE(error({{"k", "i8", -129}}).find("k is not a i8"), std::string::npos);
  EXPECT_NE(error({{"k", "u16_array_generated", {{"count", 2}, {"fill", -1}}}})
                .find("k has a fill that is not a u16"),
            std::string::npos);
  EXPECT_NE(error({{"k", "u32", 1}, {"k", "u32", 2}}).find("duplicate key k"), std::string::npos);
  EXPECT_NE(error({{"k", "array_array", {}}}).find("unknown type"), std::string::npos);
  EXPECT_NE(error({{"general.alignment", "u32", 24}}).find("power of two"), std::string::npos);
  const json none = json::array();
  EXPECT_NE(error(none, {{{"name", "w"}, {"type", 99}, {"shape", {32}}}}).find("w: unknown ggml"),
            std::string::npos);
  EXPECT_NE(error(none, {{{"name", "w"}, {"type", "Q8_0"}, {"shape", {33}}}}).find("whole number"),
            std::string::npos);
  EXPECT_EQ(error(none), "loaded") << "a 24-byte header, padded to 32";
  Result<BlobPtr> longer = MakeGgufBlob(ManifestWith(none, none, 33));
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.error().message.find("declared size 33 but the header and tensors make 32"),
            std::string::npos)
      << longer.error().message;
  EXPECT_FALSE(MakeGgufBlob("[]").ok());
  EXPECT_FALSE(MakeGgufBlob(R"({"size": 32, "sha256": "ABC"})").ok());
  EXPECT_FALSE(MakeGgufBlob(R"({"size": 32, "sha256": 7})").ok());
}

// A Link-free GET straight into the hub's state, for the listing.
json List(HubState& state, const std::string& query) {
  FakeRequest request;
  request.method = "GET";
  request.path = "/api/models";
  request.query = query;
  FakeResponse r = state.Handle(request);
  EXPECT_EQ(r.status, 200) << query << ": " << r.body;
  return json::parse(r.body, nullptr, false);
}

std::set<std::string> Ids(const json& list) {
  std::set<std::string> ids;
  for (const json& item : list) ids.insert(item["id"].get<std::string>());
  return ids;
}

TEST(DerivativeFixtures, LoadWithTheUpstreamsAndListPerRelation) {
  Result<std::vector<Repo>> repos = LoadFixtureDirs({kHub, kDerivatives});
  ASSERT_TRUE(repos.ok()) << repos.error().message;
  EXPECT_EQ(repos->size(), 15u);
  HubState state({}, std::move(repos).value());
  state.SetOrigins("http://127.0.0.1:1", "http://127.0.0.2:1");
  auto by = [&](const std::string& relation, const std::string& parent) {
    return Ids(List(state, "filter=base_model:" + relation + ":" + parent + "&expand=sha"));
  };
  using Set = std::set<std::string>;
  EXPECT_EQ(by("finetune", kL3), (Set{"aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT",
                                      "larkspur-nlp/Llama-3-8B-Instruct-Larkspur-DPO",
                                      "tidewater-ml/Llama-3-8B-Instruct-Tidewater"}));
  EXPECT_EQ(by("adapter", kL3), (Set{"pinegrove-research/llama-3-8b-instruct-sql-lora"}));
  EXPECT_EQ(by("quantized", kL3), (Set{kGgufRepo}));
  EXPECT_EQ(by("merge", kL3), (Set{"copperleaf-merges/Llama-3-8B-Instruct-Base-SLERP"}));
  EXPECT_EQ(by("merge", "meta-llama/Meta-Llama-3-8B"),
            (Set{"copperleaf-merges/Llama-3-8B-Instruct-Base-SLERP"}));
  EXPECT_EQ(by("finetune", "meta-llama/Llama-3.1-8B-Instruct"),
            (Set{"emberfield/Llama-3.1-8B-Emberfield-ChatML"}));
  EXPECT_EQ(Ids(List(state, "filter=base_model:" + kL3)).size(), 6u) << "every relation";
  EXPECT_TRUE(by("finetune", "meta-llama/Meta-Llama-3-8B").empty());
  // Encoded as a client encodes it, and with the Hub's paging.
  json page = List(state,
                   "filter=base_model%3Afinetune%3Ameta-llama%2FMeta-Llama-3-8B-Instruct"
                   "&expand=sha&limit=2");
  EXPECT_EQ(page.size(), 2u);
}

// Issue 28: fakehub makes N throwaway children of an upstream, newer than every real derivative,
// with none of the Hub's counts: newest first they crowd the real ones out of the listing; most
// downloaded first they come last.
TEST(DerivativeFixtures, SpamChildrenCrowdTheNewestFirstListingButNotTheMostDownloaded) {
  Result<std::vector<Repo>> repos = LoadFixtureDirs({kHub, kDerivatives});
  ASSERT_TRUE(repos.ok()) << repos.error().message;
  HubState state({}, std::move(repos).value());
  state.SetOrigins("http://127.0.0.1:1", "http://127.0.0.2:1");
  FakeRequest spam;
  spam.method = "POST";
  spam.path = "/_fakehub/spam";
  spam.body = json{{"upstream", kL3}, {"count", 600}, {"relation", "adapter"}}.dump();
  FakeResponse added = state.Handle(spam);
  ASSERT_EQ(added.status, 200) << added.body;
  EXPECT_EQ(json::parse(added.body)["added"], 600);
  // A second batch: new ids, another relation.
  Result<std::vector<std::string>> more = state.AddSpamChildren(kL3, 400, "finetune");
  ASSERT_TRUE(more.ok()) << more.error().message;
  ASSERT_EQ(more->size(), 400u);
  EXPECT_EQ(more->front(), "throwaway-18/Meta-Llama-3-8B-Instruct-spam-00600");

  const json adapters = List(state, "filter=base_model:adapter:" + kL3 +
                                        "&expand=createdAt&expand=downloads&expand=likes"
                                        "&expand=siblings&sort=lastModified&limit=1000");
  ASSERT_EQ(adapters.size(), 601u) << "600 spam and the real LoRA";
  EXPECT_EQ(adapters.back()["id"], "pinegrove-research/llama-3-8b-instruct-sql-lora")
      << "newest first, the real one comes last";
  const json& first = adapters.front();
  EXPECT_EQ(first["id"], "throwaway-17/Meta-Llama-3-8B-Instruct-spam-00599");
  EXPECT_EQ(first["downloads"], 0);
  EXPECT_EQ(first["likes"], 0);
  EXPECT_GT(first["createdAt"].get<std::string>(), "2025") << "created now";
  EXPECT_EQ(first["siblings"], json::parse(R"([{"rfilename": "README.md"}])"));
  const json all = List(state, "filter=base_model:" + kL3 + "&sort=lastModified&limit=200");
  EXPECT_EQ(all.size(), 200u);
  for (const json& item : all) {
    EXPECT_TRUE(item["id"].get<std::string>().starts_with("throwaway-")) << item["id"];
  }
  const json used = List(state, "filter=base_model:" + kL3 + "&sort=downloads&limit=6");
  EXPECT_EQ(Ids(used),
            (std::set<std::string>{"aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT",
                                   "larkspur-nlp/Llama-3-8B-Instruct-Larkspur-DPO",
                                   "tidewater-ml/Llama-3-8B-Instruct-Tidewater",
                                   "pinegrove-research/llama-3-8b-instruct-sql-lora", kGgufRepo,
                                   "copperleaf-merges/Llama-3-8B-Instruct-Base-SLERP"}));
  // Each is a repo like any other: its own info, its files.
  FakeRequest info;
  info.method = "GET";
  info.path = "/api/models/" + more->back();
  info.query = "expand=tags&expand=downloads";
  FakeResponse r = state.Handle(info);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["tags"],
            json::parse(R"(["base_model:meta-llama/Meta-Llama-3-8B-Instruct",
                "base_model:finetune:meta-llama/Meta-Llama-3-8B-Instruct", "region:us"])"));
  // Refused: an unknown relation, no upstream, a repo added twice.
  spam.body = json{{"upstream", kL3}, {"relation", "sibling"}}.dump();
  EXPECT_EQ(state.Handle(spam).status, 400);
  spam.body = "{}";
  EXPECT_EQ(state.Handle(spam).status, 400);
  std::vector<Repo> again = LoadFixtureDirs({kDerivatives}).value();
  EXPECT_FALSE(state.AddRepos(std::move(again)).ok());
  EXPECT_EQ(state.repo_count(), 15u + 1000u);
}

// What tests/fixtures/hub-derivatives/README.md says each repo copied, checked on the bytes.
TEST(DerivativeFixtures, CopiedFilesAreTheUpstreamBytesTheReadmeSays) {
  Result<std::vector<Repo>> repos = LoadFixtureDirs({kHub, kDerivatives});
  ASSERT_TRUE(repos.ok()) << repos.error().message;
  std::map<std::string, const Repo*> by_id;
  for (const Repo& r : *repos) by_id[r.id] = &r;
  // The blob oid of `path` at commit `index` of `id` (-1: the head); "" when absent.
  auto oid = [&](const std::string& id, int index, const std::string& path) -> std::string {
    const Repo& r = *by_id.at(id);
    const Commit& c = r.commits[index < 0 ? r.commits.size() - 1 : static_cast<size_t>(index)];
    auto it = c.files->find(path);
    return it == c.files->end() ? "" : it->second->blob_oid;
  };
  const std::vector<std::string> three = {"config.json", "generation_config.json",
                                          "tokenizer_config.json"};
  const std::string lagging = "aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT";
  const std::string fixed = "tidewater-ml/Llama-3-8B-Instruct-Tidewater";
  const std::string synced = "larkspur-nlp/Llama-3-8B-Instruct-Larkspur-DPO";
  const std::string merge = "copperleaf-merges/Llama-3-8B-Instruct-Base-SLERP";
  for (const std::string& f : three) {
    EXPECT_EQ(oid(lagging, -1, f), oid(kL3, 1, f)) << f << ": the pre-fix upload";
    EXPECT_NE(oid(kL3, 1, f), oid(kL3, -1, f)) << f << " changed upstream";
    EXPECT_EQ(oid(fixed, -1, f), oid(kL3, -1, f)) << f;
    EXPECT_EQ(oid(synced, 1, f), oid(kL3, 1, f)) << f;
    EXPECT_EQ(oid(synced, -1, f), oid(kL3, -1, f)) << f << ": synced";
  }
  for (const std::string f : {"tokenizer.json", "special_tokens_map.json"}) {
    EXPECT_EQ(oid(lagging, -1, f), oid(kL3, 1, f));
    EXPECT_EQ(oid(fixed, -1, f), oid(kL3, -1, f));
  }
  const Repo& s = *by_id.at(synced);
  EXPECT_GE(s.commits.back().time - s.commits[1].time, 3 * 86400) << "synced days later";
  EXPECT_EQ(s.commits.back().title, "Sync tokenizer and generation config with upstream");
  EXPECT_EQ(oid(merge, -1, "tokenizer_config.json"), oid(kL3, -1, "tokenizer_config.json"));
  EXPECT_EQ(oid(merge, -1, "generation_config.json"), oid(kL3, -1, "generation_config.json"));
  EXPECT_NE(oid(merge, -1, "config.json"), oid(kL3, -1, "config.json")) << "its own";
  EXPECT_NE(by_id.at(merge)
                ->commits.back()
                .files->at("config.json")
                ->inline_content.find("\"eos_token_id\": 128009"),
            std::string::npos);
  const std::string l31 = "meta-llama/Llama-3.1-8B-Instruct";
  const std::string chatml = "emberfield/Llama-3.1-8B-Emberfield-ChatML";
  for (const std::string f : {"tokenizer.json", "special_tokens_map.json"}) {
    EXPECT_EQ(oid(chatml, -1, f), oid(l31, 1, f)) << f << ": before 07eb05b2";
    EXPECT_NE(oid(chatml, -1, f), oid(l31, -1, f)) << f;
  }
  const std::string& own =
      by_id.at(chatml)->commits.back().files->at("tokenizer_config.json")->inline_content;
  EXPECT_NE(own.find("\"eos_token\": \"<|im_end|>\""), std::string::npos);
  EXPECT_NE(own.find("<|im_start|>"), std::string::npos);
  std::set<std::string> adapter;
  for (const auto& [path, blob] :
       *by_id.at("pinegrove-research/llama-3-8b-instruct-sql-lora")->commits.back().files)
    adapter.insert(path);
  EXPECT_EQ(adapter, (std::set<std::string>{".gitattributes", "README.md", "adapter_config.json",
                                            "adapter_model.safetensors"}));
  // Every derivative commit comes after the upstream upload it copies from.
  for (const Repo& r : *repos) {
    if (std::none_of(r.tags.begin(), r.tags.end(),
                     [](const std::string& t) { return t.starts_with("base_model:"); }))
      continue;
    const Repo& up = *by_id.at(r.id == chatml ? l31 : kL3);
    EXPECT_GT(r.commits.front().time, up.commits[1].time) << r.id;
  }
}

TEST(DerivativeFixtures, ADuplicateRepoAcrossDirectoriesNamesBothFiles) {
  const fs::path dir = fs::temp_directory_path() / ("fakehub-dup-" + std::to_string(::getpid()));
  fs::create_directories(dir / "meta-llama" / "copy");
  std::ofstream(dir / "meta-llama" / "copy" / "repo.json")
      << R"({"id": "meta-llama/Meta-Llama-3-8B-Instruct", "commits": [{"title": "t",
             "date": "2024-05-01T00:00:00.000Z", "add": {"a.txt": {"lfs": {"size": 1,
             "sha256": ")"
      << std::string(64, 'a') << R"("}}}}]})";
  Result<std::vector<Repo>> repos = LoadFixtureDirs({kHub, dir});
  fs::remove_all(dir);
  ASSERT_FALSE(repos.ok());
  const std::string message = repos.error().message;
  EXPECT_NE(message.find("meta-llama/Meta-Llama-3-8B-Instruct is defined twice"), std::string::npos)
      << message;
  EXPECT_NE(message.find(kHub + "/meta-llama/Meta-Llama-3-8B-Instruct/repo.json"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find((dir / "meta-llama" / "copy" / "repo.json").string()), std::string::npos)
      << message;
}

class DerivativesWire : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeHubOptions options;
    options.fixtures_dir = kHub;
    options.fixtures_dirs = {kDerivatives};
    auto hub = FakeHub::Start(std::move(options));
    ASSERT_TRUE(hub.ok()) << hub.error().message;
    hub_ = std::move(hub).value();
  }

  hub::HttpResponse Get(std::string url,
                        std::vector<std::pair<std::string, std::string>> headers = {},
                        hub::HttpMethod method = hub::HttpMethod::kGet) {
    hub::HttpRequest request;
    request.url = url.starts_with("/") ? hub_->endpoint() + url : url;
    request.method = method;
    for (auto& [k, v] : headers) request.headers.Add(k, v);
    std::optional<hub::TransportOutcome> outcome;
    transport_.Start(std::move(request), [&](hub::TransportOutcome o) { outcome = std::move(o); });
    while (!outcome) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(outcome->ok()) << outcome->error->message;
    return outcome->response;
  }

  boost::asio::io_context io_;
  hub::CurlTransport transport_{io_};
  std::unique_ptr<FakeHub> hub_;
};

std::string UpstreamTemplate() {
  std::ifstream in(kHub + "/meta-llama/Meta-Llama-3-8B-Instruct/files/v1/tokenizer_config.json");
  json config = json::parse(in, nullptr, false);
  return config.is_object() ? config.value("chat_template", std::string()) : "";
}

// What a derivative check does with a GGUF repo: find the file in the tree, resolve it at the
// head sha (302 to the CDN), read its first 8 MiB and scan the metadata.
TEST_F(DerivativesWire, TheFirst8MiBOfAFixtureGgufHoldItsWholeMetadata) {
  const std::string file = "Meta-Llama-3-8B-Instruct.Q4_K_M.gguf";
  hub::HttpResponse info = Get("/api/models/" + kGgufRepo + "?expand=sha");
  ASSERT_EQ(info.status, 200) << info.body;
  const std::string sha = json::parse(info.body)["sha"];
  hub::HttpResponse tree = Get("/api/models/" + kGgufRepo + "/tree/" + sha);
  ASSERT_EQ(tree.status, 200);
  json entry;
  for (const json& e : json::parse(tree.body))
    if (e["path"] == file) entry = e;
  ASSERT_TRUE(entry.contains("lfs")) << tree.body;
  EXPECT_EQ(entry["lfs"]["size"], 4'919'875'424u);
  EXPECT_EQ(entry["size"], 4'919'875'424u);

  hub::HttpResponse head =
      Get("/" + kGgufRepo + "/resolve/" + sha + "/" + file, {}, hub::HttpMethod::kHead);
  EXPECT_EQ(head.status, 302);
  EXPECT_EQ(head.headers.Get("X-Linked-Size").value_or(""), "4919875424");
  EXPECT_EQ(head.headers.Get("X-Linked-Etag").value_or(""),
            "\"" + entry["lfs"]["oid"].get<std::string>() + "\"");
  EXPECT_EQ(head.headers.Get("X-Repo-Commit").value_or(""), sha);
  hub::HttpResponse resolve = Get("/" + kGgufRepo + "/resolve/" + sha + "/" + file);
  ASSERT_EQ(resolve.status, 302);
  const std::string cdn(resolve.headers.Get("Location").value_or(""));
  ASSERT_TRUE(cdn.starts_with(hub_->cdn_endpoint() + "/repos/")) << cdn;

  hub::HttpResponse prefix = Get(cdn, {{"Range", "bytes=0-8388607"}});
  ASSERT_EQ(prefix.status, 206);
  EXPECT_EQ(prefix.headers.Get("Content-Range").value_or(""), "bytes 0-8388607/4919875424");
  ASSERT_EQ(prefix.body.size(), 8u << 20);
  Result<GgufScan> scan = ScanGgufMetadata(prefix.body);
  ASSERT_TRUE(scan.ok()) << scan.error().message;
  ASSERT_TRUE(scan->complete) << "needs " << scan->bytes_needed;
  const GgufMetadata& m = scan->metadata;
  EXPECT_EQ(m.version, 3u);
  EXPECT_EQ(m.tensor_count, 291u);
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(m.name, "Meta-Llama-3-8B-Instruct");
  EXPECT_EQ(m.tokenizer_model, "gpt2");
  EXPECT_EQ(m.tokenizer_pre, "llama-bpe");
  EXPECT_EQ(m.token_count, 128256u);
  EXPECT_EQ(m.special_token_ids.at("eos"), 128001);
  EXPECT_EQ(m.special_token_ids.at("bos"), 128000);
  EXPECT_EQ(m.special_token_text.at("eos"), "<|end_of_text|>");
  EXPECT_EQ(m.special_token_text.at("bos"), "<|begin_of_text|>");
  EXPECT_EQ(m.add_bos_token, true);
  ASSERT_TRUE(m.chat_template.has_value());
  EXPECT_FALSE(UpstreamTemplate().empty());
  EXPECT_EQ(*m.chat_template, UpstreamTemplate()) << "the pre-fix template, verbatim";
  EXPECT_GT(m.metadata_bytes, 6u << 20) << "megabytes of vocabulary and merges come first";

  // A shorter first read says how much more it needs; the data region answers ranges too.
  Result<GgufScan> short_scan = ScanGgufMetadata(Get(cdn, {{"Range", "bytes=0-1048575"}}).body);
  ASSERT_TRUE(short_scan.ok());
  EXPECT_FALSE(short_scan->complete);
  EXPECT_GT(short_scan->bytes_needed, 1u << 20);
  hub::HttpResponse tail = Get(cdn, {{"Range", "bytes=-16"}});
  EXPECT_EQ(tail.status, 206);
  EXPECT_EQ(tail.body.size(), 16u);
  EXPECT_EQ(Get("/" + kGgufRepo + "/resolve/main/Meta-Llama-3-8B-Instruct.Q8_0.gguf", {},
                hub::HttpMethod::kHead)
                .headers.Get("X-Linked-Size")
                .value_or(""),
            "8539912032");
}

TEST_F(DerivativesWire, DerivativesListWithTheExpandsADiscoveryAsksFor) {
  hub::HttpResponse page =
      Get("/api/models?filter=base_model%3Aquantized%3Ameta-llama%2FMeta-Llama-3-8B-Instruct"
          "&expand=sha&expand=lastModified&expand=tags&expand=siblings");
  ASSERT_EQ(page.status, 200) << page.body;
  json list = json::parse(page.body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], kGgufRepo);
  EXPECT_EQ(list[0]["lastModified"], "2024-04-18T22:40:05.000Z");
  json siblings = list[0]["siblings"];
  ASSERT_EQ(siblings.size(), 4u);
  EXPECT_EQ(siblings[2], (json{{"rfilename", "Meta-Llama-3-8B-Instruct.Q8_0.gguf"}}));
}

// The executable takes --fixtures more than once; a repo defined twice does not start.
TEST(FakeHubBinary, ServesSeveralFixtureDirectories) {
  auto spawn = [](std::vector<std::string> args, std::string* line, bool with_stderr) {
    int out[2];
    if (pipe(out) != 0) return pid_t{-1};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    if (with_stderr) posix_spawn_file_actions_adddup2(&actions, out[1], 2);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    args.insert(args.begin(), FAKEHUB_BINARY);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, FAKEHUB_BINARY, &actions, nullptr, argv.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    char c = 0;
    while (read(out[0], &c, 1) == 1 && c != '\n') *line += c;
    close(out[0]);
    return pid;
  };
  std::string line;
  const pid_t pid =
      spawn({"--fixtures", kHub, "--fixtures", kDerivatives, "--port", "0"}, &line, false);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(line.starts_with("fakehub listening on http://127.0.0.1:")) << line;
  const std::string url = line.substr(line.find("http://"));
  boost::asio::io_context io;
  hub::CurlTransport transport(io);
  hub::HttpRequest request;
  request.url = url + "/api/models?filter=base_model:adapter:" + kL3;
  std::optional<hub::TransportOutcome> outcome;
  transport.Start(request, [&](hub::TransportOutcome o) { outcome = std::move(o); });
  while (!outcome) io.run_one_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(outcome->ok());
  EXPECT_EQ(Ids(json::parse(outcome->response.body)),
            (std::set<std::string>{"pinegrove-research/llama-3-8b-instruct-sql-lora"}));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  std::string refused;
  const pid_t twice =
      spawn({"--fixtures", kHub, "--fixtures", kHub, "--port", "0"}, &refused, true);
  ASSERT_GT(twice, 0);
  waitpid(twice, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  EXPECT_NE(refused.find("is defined twice"), std::string::npos) << refused;
}

}  // namespace
}  // namespace hubwatch::fakehub
