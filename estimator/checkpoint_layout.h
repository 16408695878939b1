#pragma once

// CheckpointLayout: the tensors of a checkpoint's shards sorted by what their names say. Each
// numbered layer ("<stack>.<N>.") holds its tensors grouped by templated name, with a layer's
// experts ("experts.<N>.") folded into one stored entry when they are numbered 0..E-1 with one
// shape and dtype; the tensors outside numbered layers are sorted by place (embedding, position
// embedding, head, the rest). Internal to BuildGraphFromCheckpoint (checkpoint_graph.h): this
// reads names, shapes and dtypes; the builder makes the graph's structure from them.
//
// Holds views into the headers it was read from: REQUIRES: they outlive the layout. Immutable
// once read; safe to read from many threads.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/checkpoint_tensors.h"
#include "estimator/count.h"
#include "estimator/formats/safetensors_header.h"

namespace hubwatch::checkpoint {

// One entry of a layer as the graph stores it: `copies` tensors of `full_name`'s shape and
// dtype, named `name` in the layer's node.
struct StoredEntry {
  std::string name;            // templated ("mlp.experts.{e}.up_proj.weight") when folded
  std::string_view full_name;  // the (first) tensor in the checkpoint
  int64_t copies = 1;
};

// The tensors of one numbered layer that share a templated name.
struct TensorGroup {
  std::string rest;  // the name after "<stack>.<N>.", "{e}" for an expert's number
  // One entry of all copies when they fold (no expert number, or experts 0..E-1 of one shape
  // and dtype), else one entry per expert, named with its number.
  std::vector<StoredEntry> entries;
};

class CheckpointLayout {
 public:
  // Errors: a tensor stored in two shards, more than kMaxCheckpointTensors, no tensor at all.
  static Result<CheckpointLayout> Read(const std::vector<SafetensorsHeader>& headers);

  // REQUIRES: `name` is one of names().
  const SafetensorsTensor& tensor(std::string_view name) const { return *stored_.at(name); }
  const std::set<std::string_view>& names() const { return names_; }

  // The stacks of numbered layers, in the order their first tensor sorts.
  const std::vector<std::string>& stacks() const { return stacks_; }
  // Every numbered layer, by (stack, number), with its groups in name order.
  const std::map<std::pair<std::string, int64_t>, std::vector<TensorGroup>>& layers() const {
    return layers_;
  }
  // The tensors outside numbered layers at `place`, in name order.
  const std::vector<std::string_view>& unnumbered(Place place) const {
    return unnumbered_[static_cast<size_t>(place)];
  }

  // `layer_count` when the layers of `stack` numbered below it make up exactly that many (those
  // at or past it are stored but not loaded: DeepSeek-V3's multi-token-prediction layer); -1
  // otherwise, and when there is no count.
  int64_t LoadedBelow(const std::string& stack, std::optional<int64_t> layer_count) const;

  // The float dtype holding the most elements ("BF16" when none).
  std::string MostCommonFloatDtype() const;

 private:
  CheckpointLayout() = default;
  void Sort();

  std::map<std::string_view, const SafetensorsTensor*> stored_;
  std::set<std::string_view> names_;
  std::map<std::string_view, Count> float_elements_;
  std::vector<std::string> stacks_;
  std::map<std::pair<std::string, int64_t>, std::vector<TensorGroup>> layers_;
  std::array<std::vector<std::string_view>, 4> unnumbered_;  // by Place
};

}  // namespace hubwatch::checkpoint
