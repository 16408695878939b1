#include "estimator/checkpoint.h"

#include <algorithm>
#include <unordered_map>

namespace hubwatch {
namespace {

struct Expected {
  const TensorSpec* spec;
  bool seen = false;
};

}  // namespace

Result<CheckpointComparison> CompareWithCheckpoint(const ModelGraph& graph,
                                                   const ParamCounts& params,
                                                   const std::vector<SafetensorsHeader>& headers) {
  CheckpointComparison c;
  std::map<std::string, const SafetensorsTensor*> stored;
  for (const SafetensorsHeader& h : headers) {
    for (const auto& [name, tensor] : h.tensors) {
      if (!stored.emplace(name, &tensor).second) {
        return Error::InvalidInput("safetensors headers: tensor '" + name +
                                   "' is stored in two shards");
      }
      ++c.checkpoint_tensors;
      c.checkpoint_elements += tensor.elements;
      c.elements_by_dtype[tensor.dtype] += tensor.elements;
      c.bytes_by_dtype[tensor.dtype] += tensor.data_end - tensor.data_begin;
    }
  }

  std::unordered_map<std::string, Expected> expected;
  ForEachTensor(graph, [&](const std::string& name, const TensorSpec& spec, int64_t) {
    expected.emplace(name, Expected{&spec});
  });

  // Checkpoints saved from the base model omit its prefix; detect that once, by majority.
  const std::string& prefix = graph.base_prefix;
  if (!prefix.empty()) {
    size_t direct = 0, stripped = 0;
    for (const auto& [name, tensor] : stored) {
      direct += expected.count(name);
      stripped += expected.count(prefix + name);
    }
    c.prefix_stripped = stripped > direct;
  }

  for (const auto& [stored_name, tensor] : stored) {
    const std::string name =
        c.prefix_stripped && !expected.count(stored_name) ? prefix + stored_name : stored_name;
    auto it = expected.find(name);
    if (it == expected.end()) {
      c.unexpected.push_back(stored_name);
      c.unexpected_elements += tensor->elements;
      continue;
    }
    Expected& e = it->second;
    e.seen = true;
    const TensorSpec& spec = *e.spec;
    const uint64_t expected_elements = spec.ElementsPerCopy().value();
    if (!(spec.shape == tensor->shape)) {
      c.shape_mismatches.push_back(
          {stored_name, ShapeString(spec.shape), ShapeString(tensor->shape)});
      if (spec.role == TensorRole::kParameter) {
        c.shape_delta_elements +=
            static_cast<int64_t>(tensor->elements) - static_cast<int64_t>(expected_elements);
      }
    } else {
      ++c.matched;
    }
    switch (spec.role) {
      case TensorRole::kParameter: {
        const std::string& want = spec.dtype.empty() ? graph.dtype : spec.dtype;
        if (!want.empty() && tensor->dtype != want) {
          c.dtype_mismatches.push_back({stored_name, want, tensor->dtype});
        }
        break;
      }
      case TensorRole::kBuffer:
        c.buffer_elements += tensor->elements;
        break;
      case TensorRole::kTiedCopy:
        c.tied_copy_elements += tensor->elements;
        break;
      case TensorRole::kExtraOnDisk:
        c.extra_elements += tensor->elements;
        break;
    }
  }
  for (const auto& [name, e] : expected) {
    if (!e.seen && e.spec->role == TensorRole::kParameter) {
      // Name it as the checkpoint would.
      c.missing.push_back(
          c.prefix_stripped && name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name);
      c.missing_elements += e.spec->ElementsPerCopy().value();
    }
  }
  std::sort(c.missing.begin(), c.missing.end());

  c.delta = static_cast<int64_t>(c.checkpoint_elements) - static_cast<int64_t>(params.total);
  c.parameter_delta = static_cast<int64_t>(c.unexpected_elements) -
                      static_cast<int64_t>(c.missing_elements) + c.shape_delta_elements;
  return c;
}

}  // namespace hubwatch
