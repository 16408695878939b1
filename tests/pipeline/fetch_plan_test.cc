// The fetch plan: what a new revision reuses from the previous one or the store and what it
// fetches (small files per path, headers once per LFS sha256), and what a fetch brings into the
// snapshot. No network: the store is two lookups, the Hub's answers are values.

#include "tracker/pipeline/fetch_plan.h"

#include <gtest/gtest.h>

#include "tracker/pipeline/git_blob.h"

namespace hubwatch::pipeline {
namespace {

diff::ManifestEntry Small(std::string path, std::string content) {
  diff::ManifestEntry e;
  e.path = std::move(path);
  e.git_oid = GitBlobOid(content);
  e.size = content.size();
  return e;
}

diff::ManifestEntry Weights(std::string path, std::string sha256) {
  diff::ManifestEntry e;
  e.path = std::move(path);
  e.git_oid = "pointer-of-" + sha256;
  e.lfs_sha256 = std::move(sha256);
  e.size = 1 << 30;
  return e;
}

SafetensorsHeader HeaderOfSize(uint64_t data_size) {
  SafetensorsHeader h;
  h.data_size = data_size;
  return h;
}

// A store holding `blobs` (by git oid) and `headers` (by sha256), counting its lookups.
struct FakeStore {
  std::map<std::string, std::string> blobs;
  std::map<std::string, SafetensorsHeader> headers;
  std::vector<std::string> looked_up;
  std::optional<std::string> fail_on;  // a lookup of this id fails

  StoredContent Lookups() {
    StoredContent s;
    s.blob = [this](const std::string& oid) -> Result<std::optional<std::string>> {
      looked_up.push_back(oid);
      if (fail_on == oid) return Error::Io("disk I/O error");
      auto it = blobs.find(oid);
      return it == blobs.end() ? std::nullopt : std::optional(it->second);
    };
    s.header = [this](const std::string& id) -> Result<std::optional<SafetensorsHeader>> {
      looked_up.push_back(id);
      if (fail_on == id) return Error::Io("disk I/O error");
      auto it = headers.find(id);
      return it == headers.end() ? std::nullopt : std::optional(it->second);
    };
    return s;
  }
};

TEST(FetchPlan, TheManifestHoldsTheTreesFilesWithTheirLfsIdentity) {
  hub::TreeEntry dir{.type = "directory", .oid = "d1", .path = "onnx"};
  hub::TreeEntry config{.type = "file", .oid = "c1", .size = 700, .path = "config.json"};
  hub::TreeEntry weights{.type = "file", .oid = "p1", .size = 134, .path = "model.safetensors"};
  weights.lfs = hub::LfsInfo{.oid = "sha-w", .size = 5'000'000'000};
  const diff::Manifest m = ManifestFromTree({dir, config, weights});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].path, "config.json");
  EXPECT_EQ(m[0].git_oid, "c1");
  EXPECT_EQ(m[0].size, 700u);
  EXPECT_FALSE(m[0].lfs_sha256);
  EXPECT_EQ(m[1].git_oid, "p1");
  EXPECT_EQ(m[1].lfs_sha256, "sha-w");
  EXPECT_EQ(m[1].lfs_size, 5'000'000'000u);
  EXPECT_EQ(m[1].size, 5'000'000'000u);  // the content's size, not the pointer's
}

TEST(FetchPlan, ReusesThePreviousRevisionThenTheStoreAndFetchesTheRest) {
  Snapshot base;
  base.manifest = {Small("config.json", "{}"), Small("tokenizer.json", "old"),
                   Small("generation_config.json", "{\"a\":1}"),
                   Weights("model.safetensors", "s1")};
  base.files["config.json"] = "{}";
  base.files["tokenizer.json"] = "old";
  base.unreadable["generation_config.json"] = "timed out";
  base.headers["s1"] = HeaderOfSize(1);

  FakeStore store;
  const diff::ManifestEntry template_file = Small("chat_template.jinja", "{{ x }}");
  store.blobs[template_file.git_oid] = "{{ x }}";
  store.headers["s2"] = HeaderOfSize(2);

  Snapshot current;
  current.manifest = {Small("config.json", "{}"),
                      Small("tokenizer.json", "new"),                // changed: not in base
                      Small("generation_config.json", "{\"a\":1}"),  // base could not read it
                      template_file,                                 // the store has it
                      Small("README.md", "# hi"),                    // not tracked
                      Small("sub/config.json", "{}"),                // not tracked
                      Weights("model-1.safetensors", "s1"),          // header in base
                      Weights("model-2.safetensors", "s2"),          // header in the store
                      Weights("model-3.safetensors", "s3"),          // to read
                      Weights("copy/model-3.safetensors", "s3"),     // same content: once
                      Weights("pytorch_model.bin", "s4")};           // not safetensors
  Result<FetchPlan> plan = PlanFetches(&base, current, store.Lookups());
  ASSERT_TRUE(plan.ok()) << plan.error().message;

  ASSERT_EQ(plan->blobs.size(), 2u);
  EXPECT_EQ(plan->blobs[0].path, "tokenizer.json");
  EXPECT_EQ(plan->blobs[0].git_oid, GitBlobOid("new"));
  EXPECT_EQ(plan->blobs[1].path, "generation_config.json");
  ASSERT_EQ(plan->headers.size(), 1u);
  EXPECT_EQ(plan->headers[0].path, "model-3.safetensors");
  EXPECT_EQ(plan->headers[0].lfs_sha256, "s3");

  EXPECT_EQ(current.files, (std::map<std::string, std::string>{
                               {"config.json", "{}"}, {"chat_template.jinja", "{{ x }}"}}));
  ASSERT_EQ(current.headers.size(), 2u);
  EXPECT_EQ(current.headers.at("s1").data_size, 1u);
  EXPECT_EQ(current.headers.at("s2").data_size, 2u);
  // What the previous revision had at the same path and oid never reaches the store.
  EXPECT_EQ(store.looked_up,
            (std::vector<std::string>{GitBlobOid("new"), template_file.git_oid, "s2", "s3"}));
}

TEST(FetchPlan, TheFirstRevisionAsksTheStoreForEverything) {
  FakeStore store;
  Snapshot current;
  current.manifest = {Small("config.json", "{}"), Weights("model.safetensors", "s1")};
  Result<FetchPlan> plan = PlanFetches(nullptr, current, store.Lookups());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->blobs.size(), 1u);
  EXPECT_EQ(plan->headers.size(), 1u);
  EXPECT_EQ(store.looked_up, (std::vector<std::string>{GitBlobOid("{}"), "s1"}));
}

TEST(FetchPlan, AStoreErrorEndsThePlanning) {
  FakeStore store;
  store.fail_on = "s1";
  Snapshot current;
  current.manifest = {Weights("model.safetensors", "s1"), Small("config.json", "{}")};
  Result<FetchPlan> plan = PlanFetches(nullptr, current, store.Lookups());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message, "disk I/O error");
  EXPECT_EQ(store.looked_up, std::vector<std::string>{"s1"});
}

TEST(FetchPlan, OnlyABadFileIsAContentProblem) {
  EXPECT_TRUE(IsContentProblem(hub::HubErrorKind::kProtocol));
  EXPECT_TRUE(IsContentProblem(hub::HubErrorKind::kEntryNotFound));
  EXPECT_FALSE(IsContentProblem(hub::HubErrorKind::kNotFound));
  EXPECT_FALSE(IsContentProblem(hub::HubErrorKind::kRateLimited));
  EXPECT_FALSE(IsContentProblem(hub::HubErrorKind::kShutdown));
}

TEST(FetchPlan, AFetchedFileIsKeptOnlyWhenItMatchesItsGitOid) {
  Snapshot current;
  NewContent fresh;
  const BlobFetch good{"config.json", GitBlobOid("{\"a\": 1}")};
  RecordBlob(good, hub::FileContent{.body = "{\"a\": 1}"}, current, fresh);
  EXPECT_EQ(current.File("config.json"), "{\"a\": 1}");
  EXPECT_EQ(fresh.blobs.at(good.git_oid), "{\"a\": 1}");

  const BlobFetch cut{"tokenizer.json", GitBlobOid("{\"whole\": true}")};
  RecordBlob(cut, hub::FileContent{.body = "{\"whole\""}, current, fresh);
  EXPECT_FALSE(current.File("tokenizer.json"));
  EXPECT_EQ(current.unreadable.at("tokenizer.json"),
            "the content served does not match its git blob id " + cut.git_oid +
                " (truncated or altered)");

  const BlobFetch gone{"generation_config.json", "g1"};
  const hub::HubError error = hub::ProtocolError("not JSON", "https://hub/x");
  RecordBlob(gone, error, current, fresh);
  EXPECT_EQ(current.unreadable.at("generation_config.json"), error.ToString());
  EXPECT_EQ(fresh.blobs.size(), 1u);  // only the good one is new content
}

TEST(FetchPlan, AFetchedHeaderIsKeptByItsLfsId) {
  Snapshot current;
  NewContent fresh;
  RecordHeader({"model.safetensors", "s1"}, hub::SafetensorsHeaderInfo{.header = HeaderOfSize(42)},
               current, fresh);
  EXPECT_EQ(current.headers.at("s1").data_size, 42u);
  EXPECT_EQ(fresh.headers.at("s1").data_size, 42u);
  const hub::HubError error = hub::ProtocolError("header too long", "https://hub/y");
  RecordHeader({"model-2.safetensors", "s2"}, error, current, fresh);
  EXPECT_EQ(current.unreadable.at("model-2.safetensors"), error.ToString());
  EXPECT_FALSE(current.headers.count("s2"));
  EXPECT_FALSE(fresh.headers.count("s2"));
}

}  // namespace
}  // namespace hubwatch::pipeline
