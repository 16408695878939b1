#pragma once

// Tensor-by-tensor comparison of a ModelGraph with a checkpoint's safetensors headers: which
// tensors match, which expected parameters are missing, which stored tensors are unexpected,
// shape and dtype mismatches, and the scalar delta between the checkpoint's element count and
// our parameter count, explained (buffers, tied copies and on-disk extras are expected; a
// non-zero parameter delta is not). Names are matched exactly, or with the graph's base prefix
// removed ("transformer.h.0..." against gpt2's "h.0..."). The lists hold the first
// kMaxKeptFindings findings (and count them all), with names and shapes from the header
// clipped to kMaxReportedNameBytes; the reports show the first few. Pure function; thread-safe.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/formats/safetensors_header.h"
#include "estimator/model_graph.h"

namespace hubwatch {

// Tensor names and shapes a header holds are as long as upstream writes them; a comparison
// reports at most this much of each.
inline constexpr size_t kMaxReportedNameBytes = 256;
// And a header holds as many tensors as upstream writes: each list keeps its first this many
// findings, and its *_count says how many there are.
inline constexpr size_t kMaxKeptFindings = 1000;

struct TensorMismatch {
  std::string name;
  std::string expected;  // "[4096, 3584]" or "BF16"
  std::string actual;
};

struct CheckpointComparison {
  uint64_t checkpoint_tensors = 0;
  uint64_t checkpoint_elements = 0;
  std::map<std::string, uint64_t> elements_by_dtype;
  std::map<std::string, uint64_t> bytes_by_dtype;
  bool prefix_stripped = false;  // the checkpoint omits the base prefix

  uint64_t matched = 0;              // tensors present with the expected shape
  std::vector<std::string> missing;  // expected parameters not stored
  uint64_t missing_count = 0;
  uint64_t missing_elements = 0;
  std::vector<std::string> unexpected;  // stored, not in the graph
  uint64_t unexpected_count = 0;
  uint64_t unexpected_elements = 0;
  std::vector<TensorMismatch> shape_mismatches;
  uint64_t shape_mismatch_count = 0;
  std::vector<TensorMismatch> dtype_mismatches;
  uint64_t dtype_mismatch_count = 0;
  int64_t shape_delta_elements = 0;  // stored minus expected elements of shape mismatches

  uint64_t buffer_elements = 0;     // stored buffers we know (gpt2 attn.bias)
  uint64_t tied_copy_elements = 0;  // stored copies of tied weights
  uint64_t extra_elements = 0;      // stored tensors transformers does not load

  // delta = checkpoint_elements - params.total
  //       = buffer_elements + tied_copy_elements + extra_elements + parameter_delta,
  // where parameter_delta = unexpected - missing + shape delta of parameters is the part no
  // known tensor explains. 0 means exact, tensor by tensor.
  int64_t delta = 0;
  int64_t parameter_delta = 0;
};

// Fails when two headers (shards) hold the same tensor name, and with kOverflow when their
// element counts do not fit 64 bits.
Result<CheckpointComparison> CompareWithCheckpoint(const ModelGraph& graph,
                                                   const ParamCounts& params,
                                                   const std::vector<SafetensorsHeader>& headers);

}  // namespace hubwatch
