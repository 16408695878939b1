#pragma once

// Helpers of the composite-model tests (qwen_vl_test.cc, llama4_test.cc, mllama_test.cc):
// building a graph that must build, its counts, and the tensors its checkpoint stores.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "estimator/architectures.h"

namespace hubwatch::testing {

inline ModelGraph BuildOk(const nlohmann::json& config) {
  Result<ModelGraph> g = BuildModelGraph(config);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(g).value() : ModelGraph{};
}

inline ParamCounts CountsOf(const ModelGraph& g) {
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

}  // namespace hubwatch::testing
