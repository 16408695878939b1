#include "estimator/checkpoint.h"

#include <algorithm>
#include <unordered_map>

#include "estimator/format.h"

namespace hubwatch {
namespace {

struct Expected {
  const TensorSpec* spec;
  bool seen = false;
};

// The header's sums, in arithmetic that poisons: element counts are upstream's numbers, and
// several shards of large tensors can sum past 2^64.
struct Sums {
  Count elements, missing, unexpected, buffers, tied_copies, extra;
  Count reshaped_stored, reshaped_expected;  // parameters whose shape differs
  std::map<std::string, Count> elements_by_dtype, bytes_by_dtype;
};

Error TooLarge() { return Error::Overflow("safetensors headers: element counts overflow 64 bits"); }

}  // namespace

Result<CheckpointComparison> CompareWithCheckpoint(const ModelGraph& graph,
                                                   const ParamCounts& params,
                                                   const std::vector<SafetensorsHeader>& headers) {
  CheckpointComparison c;
  Sums sums;
  std::map<std::string, const SafetensorsTensor*> stored;
  for (const SafetensorsHeader& h : headers) {
    for (const auto& [name, tensor] : h.tensors) {
      if (!stored.emplace(name, &tensor).second) {
        return Error::InvalidInput("safetensors headers: tensor '" + Clip(name) +
                                   "' is stored in two shards");
      }
      ++c.checkpoint_tensors;
      sums.elements += tensor.elements;
      sums.elements_by_dtype[tensor.dtype] += tensor.elements;
      sums.bytes_by_dtype[tensor.dtype] += tensor.data_end - tensor.data_begin;
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
      if (++c.unexpected_count <= kMaxKeptFindings) {
        c.unexpected.push_back(Clip(stored_name, kMaxReportedNameBytes));
      }
      sums.unexpected += tensor->elements;
      continue;
    }
    Expected& e = it->second;
    e.seen = true;
    const TensorSpec& spec = *e.spec;
    const uint64_t expected_elements = spec.ElementsPerCopy().value();
    if (!(spec.shape == tensor->shape)) {
      if (++c.shape_mismatch_count <= kMaxKeptFindings) {
        c.shape_mismatches.push_back({Clip(stored_name, kMaxReportedNameBytes),
                                      ShapeString(spec.shape),
                                      Clip(ShapeString(tensor->shape), kMaxReportedNameBytes)});
      }
      if (spec.role == TensorRole::kParameter) {
        sums.reshaped_stored += tensor->elements;
        sums.reshaped_expected += expected_elements;
      }
    } else {
      ++c.matched;
    }
    switch (spec.role) {
      case TensorRole::kParameter: {
        const std::string& want = spec.dtype.empty() ? graph.dtype : spec.dtype;
        if (!want.empty() && tensor->dtype != want &&
            ++c.dtype_mismatch_count <= kMaxKeptFindings) {
          c.dtype_mismatches.push_back(
              {Clip(stored_name, kMaxReportedNameBytes), want, tensor->dtype});
        }
        break;
      }
      case TensorRole::kBuffer:
        sums.buffers += tensor->elements;
        break;
      case TensorRole::kTiedCopy:
        sums.tied_copies += tensor->elements;
        break;
      case TensorRole::kExtraOnDisk:
        sums.extra += tensor->elements;
        break;
    }
  }
  for (const auto& [name, e] : expected) {
    if (!e.seen && e.spec->role == TensorRole::kParameter) {
      // Name it as the checkpoint would.
      if (++c.missing_count <= kMaxKeptFindings) {
        c.missing.push_back(
            c.prefix_stripped && name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name);
      }
      sums.missing += e.spec->ElementsPerCopy();
    }
  }
  std::sort(c.missing.begin(), c.missing.end());

  std::optional<int64_t> shape_delta =
      SignedDifference(sums.reshaped_stored, sums.reshaped_expected);
  std::optional<int64_t> delta = SignedDifference(sums.elements, params.total);
  std::optional<int64_t> parameter_delta = SignedDifference(sums.unexpected + sums.reshaped_stored,
                                                            sums.missing + sums.reshaped_expected);
  for (Count n :
       {sums.elements, sums.missing, sums.unexpected, sums.buffers, sums.tied_copies, sums.extra}) {
    if (n.overflowed()) return TooLarge();
  }
  if (!shape_delta || !delta || !parameter_delta) return TooLarge();
  for (const auto& [dtype, n] : sums.elements_by_dtype) {
    if (n.overflowed()) return TooLarge();
    c.elements_by_dtype[dtype] = n.value();
  }
  for (const auto& [dtype, n] : sums.bytes_by_dtype) {
    if (n.overflowed()) return TooLarge();
    c.bytes_by_dtype[dtype] = n.value();
  }
  c.checkpoint_elements = sums.elements.value();
  c.missing_elements = sums.missing.value();
  c.unexpected_elements = sums.unexpected.value();
  c.buffer_elements = sums.buffers.value();
  c.tied_copy_elements = sums.tied_copies.value();
  c.extra_elements = sums.extra.value();
  c.shape_delta_elements = *shape_delta;
  c.delta = *delta;
  c.parameter_delta = *parameter_delta;
  return c;
}

}  // namespace hubwatch
