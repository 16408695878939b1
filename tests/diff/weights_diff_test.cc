// The weights engine: checkpoints from manifests and safetensors headers.

#include "tracker/diff/weights_diff.h"

#include <gtest/gtest.h>

#include "tests/estimator/test_util.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;
using testing::ReadFixture;

struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
};

// A real header, laid out as the safetensors writer does, parsed by the estimator's parser.
SafetensorsHeader MakeHeader(const std::vector<TensorSpec>& tensors) {
  json header = {{"__metadata__", {{"format", "pt"}}}};
  uint64_t offset = 0;
  for (const TensorSpec& t : tensors) {
    uint64_t n = 1;
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    const uint64_t bytes = n * (t.dtype == "F32" ? 4 : 2);
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  Result<SafetensorsHeader> parsed = ParseSafetensorsHeader(header.dump());
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message);
  return parsed.ok() ? *parsed : SafetensorsHeader{};
}

ManifestEntry Lfs(const std::string& path, const std::string& sha, uint64_t size = 1000) {
  return {path, "oid-" + sha, size, sha, size};
}

std::string Index(const std::map<std::string, std::string>& weight_map) {
  return json({{"metadata", {{"total_size", 1234}}}, {"weight_map", weight_map}}).dump(2);
}

// A two-shard Phi-3-mini-like checkpoint (3 layers' worth of tensor names).
const std::vector<TensorSpec> kShard1 = {
    {"model.embed_tokens.weight", "BF16", {32064, 3072}},
    {"model.layers.0.self_attn.qkv_proj.weight", "BF16", {9216, 3072}},
    {"model.layers.0.mlp.gate_up_proj.weight", "BF16", {16384, 3072}},
};
const std::vector<TensorSpec> kShard2 = {
    {"model.layers.1.self_attn.qkv_proj.weight", "BF16", {9216, 3072}},
    {"model.norm.weight", "BF16", {3072}},
    {"lm_head.weight", "BF16", {32064, 3072}},
};

std::map<std::string, std::string> WeightMap(const std::vector<TensorSpec>& one,
                                             const std::vector<TensorSpec>& two) {
  std::map<std::string, std::string> map;
  for (const TensorSpec& t : one) map[t.name] = "model-00001-of-00002.safetensors";
  for (const TensorSpec& t : two) map[t.name] = "model-00002-of-00002.safetensors";
  return map;
}

struct Phi3 {
  HeadersBySha256 headers;
  Manifest before;
  Manifest after;
  IndexFiles index;
};

Phi3 Phi3Refresh() {
  Phi3 p;
  p.headers["a1"] = MakeHeader(kShard1);
  p.headers["a2"] = MakeHeader(kShard2);
  p.headers["b1"] = MakeHeader(kShard1);  // same header, new content
  p.headers["b2"] = MakeHeader(kShard2);
  const ManifestEntry index = {"model.safetensors.index.json", "idx", 100, std::nullopt,
                               std::nullopt};
  p.before = {{"config.json", "c", 10, std::nullopt, std::nullopt},
              index,
              Lfs("model-00001-of-00002.safetensors", "a1"),
              Lfs("model-00002-of-00002.safetensors", "a2")};
  p.after = {{"config.json", "c", 10, std::nullopt, std::nullopt},
             index,
             Lfs("model-00001-of-00002.safetensors", "b1"),
             Lfs("model-00002-of-00002.safetensors", "b2")};
  p.index["model.safetensors.index.json"] = Index(WeightMap(kShard1, kShard2));
  return p;
}

// F8: Phi-3-mini's June 2024 refresh: new weights, same shapes.
TEST(WeightsDiff, Phi3RefreshIsValuesChangedShapesIdentical) {
  const Phi3 p = Phi3Refresh();
  const std::vector<Change> changes = DiffWeights(p.before, p.after, p.headers, p.index, p.index);
  ASSERT_EQ(changes.size(), 1u);
  const Change& change = changes[0];
  EXPECT_EQ(change.kind, ChangeKind::kWeights);
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.path, "model.safetensors");
  EXPECT_EQ(change.summary,
            "model.safetensors: values changed, shapes identical (2 of 2 files new content)");
  EXPECT_EQ(change.details["values_changed"], true);
  EXPECT_EQ(change.details["scalars_delta"], 0);
  EXPECT_EQ(change.details["scalars_before"], change.details["scalars_after"]);
  // 32064*3072 (embed) + 9216*3072 + 16384*3072 + 9216*3072 + 3072 + 32064*3072 (lm_head)
  EXPECT_EQ(change.details["scalars_before"], 303'959'040u);
  EXPECT_EQ(change.details["files"]["changed"].size(), 2u);
  EXPECT_EQ(change.details["files"]["changed"][0]["old_sha256"], "a1");
  EXPECT_TRUE(change.details["tensors"]["reshaped"].empty());
  EXPECT_TRUE(change.details["headers_missing"].empty());
  // Nothing new: nothing to say.
  EXPECT_TRUE(DiffWeights(p.after, p.after, p.headers, p.index, p.index).empty());
}

TEST(WeightsDiff, TensorMovingBetweenShardsIsNotATensorChange) {
  Phi3 p = Phi3Refresh();
  std::vector<TensorSpec> one = kShard1;
  std::vector<TensorSpec> two = kShard2;
  one.push_back(two.front());  // layer 1 qkv moves to shard 1
  two.erase(two.begin());
  p.headers["b1"] = MakeHeader(one);
  p.headers["b2"] = MakeHeader(two);
  IndexFiles new_index = {{"model.safetensors.index.json", Index(WeightMap(one, two))}};
  const std::vector<Change> changes = DiffWeights(p.before, p.after, p.headers, p.index, new_index);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].summary,
            "model.safetensors: re-sharded (1 tensor moved between files), shapes identical");
  EXPECT_EQ(changes[0].details["tensors"]["moved_between_files"], 1);
  EXPECT_EQ(changes[0].details["index"]["tensors_remapped"], 1);
}

// The real gpt2 header against a copy with one tensor reshaped and one missing.
TEST(WeightsDiff, ReshapedAndMissingTensorsAreBreaking) {
  HeadersBySha256 headers;
  Result<SafetensorsHeader> gpt2 =
      ParseSafetensorsHeader(ReadFixture("safetensors/gpt2.header.json"));
  Result<SafetensorsHeader> perturbed =
      ParseSafetensorsHeader(ReadFixture("safetensors/gpt2-perturbed.header.json"));
  ASSERT_TRUE(gpt2.ok() && perturbed.ok());
  headers["old"] = *gpt2;
  headers["new"] = *perturbed;
  const std::vector<Change> changes =
      DiffWeights({Lfs("model.safetensors", "old")}, {Lfs("model.safetensors", "new")}, headers);
  ASSERT_EQ(changes.size(), 1u);
  const Change& change = changes[0];
  EXPECT_EQ(change.impact, Impact::kBreaking);
  const json& tensors = change.details["tensors"];
  EXPECT_EQ(tensors["removed_count"], 1);
  EXPECT_EQ(tensors["reshaped"].size(), 1u);
  EXPECT_EQ(change.details["values_changed"], false);
  // The scalar delta is what the reshape and the removal took away.
  int64_t expected = 0;
  for (const auto& [name, t] : perturbed->tensors) expected += static_cast<int64_t>(t.elements);
  for (const auto& [name, t] : gpt2->tensors) expected -= static_cast<int64_t>(t.elements);
  EXPECT_EQ(change.details["scalars_delta"], expected);
  EXPECT_NE(change.summary.find("-1 tensor (h.11.ln_2.bias)"), std::string::npos) << change.summary;
  EXPECT_NE(change.summary.find("1 reshaped ("), std::string::npos) << change.summary;
}

TEST(WeightsDiff, DtypeChangeIsBehavioral) {
  HeadersBySha256 headers;
  headers["a"] = MakeHeader({{"w", "F32", {4, 4}}});
  headers["b"] = MakeHeader({{"w", "BF16", {4, 4}}});
  const std::vector<Change> changes =
      DiffWeights({Lfs("model.safetensors", "a")}, {Lfs("model.safetensors", "b")}, headers);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].summary, "model.safetensors: 1 dtype changed (w F32 -> BF16)");
}

TEST(WeightsDiff, CheckpointsAddedAndRemoved) {
  HeadersBySha256 headers;
  headers["s"] = MakeHeader({{"w", "F32", {10, 10}}});
  const Manifest bin_only = {Lfs("pytorch_model.bin", "p")};
  const Manifest both = {Lfs("pytorch_model.bin", "p"), Lfs("model.safetensors", "s")};
  const Manifest safetensors_only = {Lfs("model.safetensors", "s")};
  std::vector<Change> changes = DiffWeights(bin_only, both, headers);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].summary, "model.safetensors: added (1 file, 100 scalars)");
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  changes = DiffWeights(both, safetensors_only, headers);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].summary, "pytorch_model.bin: removed (1 file)");
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);  // safetensors remain
  changes = DiffWeights(safetensors_only, {}, headers);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBreaking);  // nothing left to load
}

TEST(WeightsDiff, OtherFormatsAndMissingHeadersAreFileLevel) {
  std::vector<Change> changes = DiffWeights({Lfs("pytorch_model.bin", "0123456789abcdef")},
                                            {Lfs("pytorch_model.bin", "fedcba9876543210")}, {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(
      changes[0].summary,
      "pytorch_model.bin: pytorch_model.bin new content (sha256 0123456789ab -> fedcba987654)");
  EXPECT_EQ(changes[0].details["format"], "other");
  HeadersBySha256 headers;
  headers["a"] = MakeHeader({{"w", "F32", {2}}});
  changes = DiffWeights({Lfs("model.safetensors", "a")}, {Lfs("model.safetensors", "zz")}, headers);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].details["headers_missing"], json({"model.safetensors"}));
  EXPECT_FALSE(changes[0].details.contains("tensors"));
  EXPECT_NE(changes[0].summary.find("headers unavailable for 1 file"), std::string::npos);
}

TEST(WeightsDiff, ShardsWithoutAnIndexGroupByName) {
  EXPECT_EQ(CheckpointOfShard("model-00001-of-00004.safetensors"), "model.safetensors");
  EXPECT_EQ(CheckpointOfShard("sub/pytorch_model-00002-of-00002.bin"), "sub/pytorch_model.bin");
  EXPECT_EQ(CheckpointOfShard("model.safetensors"), "model.safetensors");
  EXPECT_EQ(CheckpointOfShard("consolidated.safetensors"), "consolidated.safetensors");
  EXPECT_EQ(CheckpointOfShard("model-x-of-00004.safetensors"), "model-x-of-00004.safetensors");
  EXPECT_EQ(CheckpointOfShard("-00001-of-00002.safetensors"), "-00001-of-00002.safetensors");
  Phi3 p = Phi3Refresh();
  const std::vector<Change> changes = DiffWeights(p.before, p.after, p.headers);  // no index given
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path, "model.safetensors");
  EXPECT_EQ(changes[0].details["values_changed"], true);
}

TEST(WeightsDiff, IndexProblemsAndErrors) {
  Phi3 p = Phi3Refresh();
  std::map<std::string, std::string> map = WeightMap(kShard1, kShard2);
  map["extra.weight"] = "model-00002-of-00002.safetensors";  // not in that header
  map["more.weight"] = "model-00003-of-00003.safetensors";   // no such file
  IndexFiles broken_map = {{"model.safetensors.index.json", Index(map)}};
  std::vector<Change> changes = DiffWeights(p.after, p.after, p.headers, p.index, broken_map);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBreaking);
  EXPECT_EQ(changes[0].details["index_problems"].size(), 2u);
  EXPECT_EQ(changes[0].summary,
            "model.safetensors: model.safetensors.index.json places extra.weight in "
            "model-00002-of-00002.safetensors, whose header lacks it (+1 more); index weight_map "
            "changed (2 tensors), files unchanged");
  EXPECT_EQ(changes[0].details["index_problems"][1],
            "model.safetensors.index.json names model-00003-of-00003.safetensors, which is not "
            "in the revision");

  IndexFiles not_json = {{"model.safetensors.index.json", "{\"weight_map\": "}};
  changes = DiffWeights(p.after, p.after, p.headers, p.index, not_json);
  ASSERT_GE(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kError);
  EXPECT_EQ(changes[0].path, "model.safetensors.index.json");
  // Reported once: the same broken bytes at the next revision are not news.
  for (const Change& c : DiffWeights(p.after, p.after, p.headers, not_json, not_json)) {
    EXPECT_NE(c.kind, ChangeKind::kError);
  }
}

}  // namespace
}  // namespace hubwatch::diff
