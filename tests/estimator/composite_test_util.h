#pragma once

// What the tests of towers and composite models share (vision_test.cc, multimodal_test.cc,
// qwen_vl_test.cc, llama4_test.cc, mllama_test.cc): building a graph that must build, its counts,
// and its tensors by checkpoint name for checking names and shapes.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/checkpoint.h"
#include "tests/estimator/test_util.h"

namespace hubwatch::testing {

inline ModelGraph BuildOk(const nlohmann::json& config) {
  Result<ModelGraph> g = BuildModelGraph(config);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(g).value() : ModelGraph{};
}

inline ModelGraph BuildRepo(const std::string& repo) {
  return BuildOk(ReadJsonFixture(ModelConfigPath(repo)));
}

inline ParamCounts CountsOk(const ModelGraph& g) {
  Result<ParamCounts> c = CountParameters(g);
  EXPECT_TRUE(c.ok());
  return c.ok() ? *c : ParamCounts{};
}

// Every tensor the reference checkpoint stores, names expanded: name -> shape.
inline std::map<std::string, std::vector<int64_t>> StoredShapes(const ModelGraph& g) {
  std::map<std::string, std::vector<int64_t>> out;
  ForEachTensor(g, [&](const std::string& name, const TensorSpec& spec, int64_t) {
    if (spec.stored) out.emplace(name, spec.shape.ToVector());
  });
  return out;
}

struct NamedTensor {
  std::vector<int64_t> shape;
  TensorRole role = TensorRole::kParameter;
  bool stored = true;
};

// Every tensor of the graph by its checkpoint name, stored or not.
inline std::map<std::string, NamedTensor> TensorsByName(const ModelGraph& g) {
  std::map<std::string, NamedTensor> out;
  ForEachTensor(g, [&](const std::string& name, const TensorSpec& t, int64_t) {
    out[name] = {t.shape.ToVector(), t.role, t.stored};
  });
  return out;
}

inline void ExpectShape(const std::map<std::string, NamedTensor>& tensors, const std::string& name,
                        const std::vector<int64_t>& shape) {
  auto it = tensors.find(name);
  ASSERT_NE(it, tensors.end()) << name;
  EXPECT_EQ(it->second.shape, shape) << name;
}

// The graph against the checkpoint its reference release stores (HeaderOf): every tensor
// matched, nothing missing or unexplained.
inline void ExpectMatchesItsCheckpoint(const ModelGraph& g) {
  Result<CheckpointComparison> cmp = CompareWithCheckpoint(g, CountsOk(g), {HeaderOf(g)});
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(cmp->parameter_delta, 0);
  EXPECT_TRUE(cmp->missing.empty());
  EXPECT_TRUE(cmp->unexpected.empty());
}

// `repo`'s config with `part`.num_hidden_layers = 1e9 fails with one line naming the part,
// instead of allocating.
inline void ExpectHugePartFails(const std::string& repo, const std::string& part) {
  nlohmann::json config = ReadJsonFixture(ModelConfigPath(repo));
  config[part]["num_hidden_layers"] = 1000000000;
  Result<ModelGraph> g = BuildModelGraph(config);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find(part), std::string::npos) << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);
}

}  // namespace hubwatch::testing
