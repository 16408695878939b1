// The checkpoint's tensors sorted by their names (estimator/checkpoint_layout.h): numbered
// layers, experts folded or not, places outside the layers, the loaded layers of a stack.

#include "estimator/checkpoint_layout.h"

#include <gtest/gtest.h>

namespace hubwatch::checkpoint {
namespace {

SafetensorsTensor Tensor(std::string dtype, std::vector<int64_t> shape) {
  SafetensorsTensor t;
  t.dtype = std::move(dtype);
  t.shape = std::move(shape);
  t.elements = 1;
  for (int64_t d : t.shape) t.elements *= static_cast<uint64_t>(d);
  return t;
}

TEST(CheckpointLayout, SortsTensorsByWhatTheirNamesSay) {
  SafetensorsHeader h;
  h.tensors["model.embed_tokens.weight"] = Tensor("BF16", {100, 8});
  h.tensors["lm_head.weight"] = Tensor("BF16", {100, 8});
  h.tensors["model.norm.weight"] = Tensor("F32", {8});
  for (int layer = 0; layer < 3; ++layer) {
    const std::string prefix = "model.layers." + std::to_string(layer) + ".";
    h.tensors[prefix + "self_attn.q_proj.weight"] = Tensor("BF16", {8, 8});
    for (int e = 0; e < 2; ++e) {
      h.tensors[prefix + "mlp.experts." + std::to_string(e) + ".up.weight"] =
          Tensor("BF16", {layer == 2 && e == 1 ? 4 : 16, 8});
    }
  }
  const std::vector<SafetensorsHeader> headers = {h};  // the layout holds views into them
  Result<CheckpointLayout> layout = CheckpointLayout::Read(headers);
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  EXPECT_EQ(layout->stacks(), std::vector<std::string>{"model.layers"});
  EXPECT_EQ(layout->layers().size(), 3u);
  EXPECT_EQ(layout->unnumbered(Place::kEmbedding).size(), 1u);
  EXPECT_EQ(layout->unnumbered(Place::kHead).size(), 1u);
  EXPECT_EQ(layout->unnumbered(Place::kOther).size(), 1u);
  EXPECT_TRUE(layout->unnumbered(Place::kPositionEmbedding).empty());
  EXPECT_EQ(layout->MostCommonFloatDtype(), "BF16");

  // Experts of one shape fold into one entry of two copies; layer 2's differ and stay apart.
  const std::vector<TensorGroup>& first = layout->layers().at({"model.layers", 0});
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].rest, "mlp.experts.{e}.up.weight");
  ASSERT_EQ(first[0].entries.size(), 1u);
  EXPECT_EQ(first[0].entries[0].name, "mlp.experts.{e}.up.weight");
  EXPECT_EQ(first[0].entries[0].copies, 2);
  const std::vector<TensorGroup>& last = layout->layers().at({"model.layers", 2});
  ASSERT_EQ(last[0].entries.size(), 2u);
  EXPECT_EQ(last[0].entries[1].name, "mlp.experts.1.up.weight");
  EXPECT_EQ(last[0].entries[1].full_name, "model.layers.2.mlp.experts.1.up.weight");
  EXPECT_EQ(last[0].entries[1].copies, 1);

  EXPECT_EQ(layout->LoadedBelow("model.layers", 2), 2) << "layer 2 stored past the count";
  EXPECT_EQ(layout->LoadedBelow("model.layers", 3), 3);
  EXPECT_EQ(layout->LoadedBelow("model.layers", 4), -1);
  EXPECT_EQ(layout->LoadedBelow("model.layers", std::nullopt), -1);
}

TEST(CheckpointLayout, RefusesNoTensorsAndATensorInTwoShards) {
  EXPECT_FALSE(CheckpointLayout::Read({SafetensorsHeader()}).ok());
  SafetensorsHeader a;
  a.tensors["x.weight"] = Tensor("F32", {2, 2});
  EXPECT_FALSE(CheckpointLayout::Read({a, a}).ok());
  EXPECT_TRUE(CheckpointLayout::Read({a}).ok());
}

}  // namespace
}  // namespace hubwatch::checkpoint
