#pragma once

// What one tensor of a checkpoint is, from its name, dtype and shape alone: where it sits (a
// numbered layer and expert, an embedding, the head), what it holds (a parameter, a buffer,
// quantization metadata) and how many parameters each stored element packs. Internal to the
// estimator: the parts of BuildGraphFromCheckpoint (checkpoint_graph.h) that read one tensor.
// Pure functions; thread-safe.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/formats/safetensors_header.h"
#include "estimator/model_graph.h"

namespace hubwatch::checkpoint {

// "model.layers.12.mlp.experts.3.up_proj.weight" -> stack "model.layers", layer 12, rest
// "mlp.experts.{e}.up_proj.weight", expert 3. No numbered stack: layer -1, rest = the name.
struct NameParts {
  std::string stack;
  int64_t layer = -1;
  std::string rest;
  int64_t expert = -1;
};
NameParts ParseName(std::string_view name);

bool IsFloat(std::string_view dtype);

struct Quantization {
  std::string method;  // quantization_config.quant_method: "gptq", "awq", "bitsandbytes", ...
  int64_t bits = 4;
};

// What the tensors read so far hold that the graph's notes must say.
struct Findings {
  bool packed_nf4 = false, packed_int = false, mxfp4 = false, extra = false;
};
// Those notes.
std::vector<std::string> FindingNotes(const Findings& found, const Quantization& q);

// The TensorSpec of one stored tensor named `spec_name` in its node (`full_name` in the
// checkpoint): its role, packing and, for a 2-D weight, its linear shape. `all_names` are the
// checkpoint's tensor names (a bitsandbytes weight is known by its quant_state sibling).
TensorSpec Spec(const std::string& spec_name, std::string_view full_name,
                const SafetensorsTensor& t, const std::set<std::string_view>& all_names,
                const Quantization& q, Findings& found);

// Where a tensor outside the numbered layers belongs.
enum class Place { kEmbedding, kPositionEmbedding, kHead, kOther };
Place PlaceOf(std::string_view name, const SafetensorsTensor& t);

}  // namespace hubwatch::checkpoint
