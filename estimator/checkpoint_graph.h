#pragma once

// BuildGraphFromCheckpoint: a ModelGraph of the tensors a checkpoint stores, for a model whose
// architecture is not modelled (an unknown model_type, remote code, no config.json at all), so
// that every tracked repo with safetensors gets counts and memory, said to come "from the
// checkpoint's tensors: structure not modelled".
//
// Exact: every stored tensor with its name, shape and dtype; stored elements and bytes by dtype;
// the parameters they hold, packed quantized tensors unpacked (GPTQ and AWQ int32 qweight, NF4
// or FP4 bytes of bitsandbytes, MXFP4 blocks), while quantization metadata (scales, zeros,
// absmax, g_idx, FP8 scale_inv) is stored but is no parameter; LoRA on every 2-D linear weight.
// Read from names: layers ("<stack>.<N>." under layers / layer / h / blocks / block), experts
// ("experts.<N>."), embeddings, the head, buffers (inv_freq, position_ids, causal masks).
// From config.json's generic keys when present: the KV cache (num_hidden_layers,
// num_attention_heads, num_key_value_heads, head_dim, hidden_size), top-k routing
// (num_experts_per_tok), max_position_embeddings and the dtype. Training activations are
// approximate: the inputs of every linear layer. Each inference is a note on the graph.
//
// Pure function; thread-safe.

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/formats/safetensors_header.h"
#include "estimator/model_graph.h"

namespace hubwatch {

// A checkpoint of more tensors than this, all shards together, is refused: no released model
// comes near it (DeepSeek-V3: ~92,000 with its experts), and each costs a few hundred bytes here.
inline constexpr size_t kMaxCheckpointTensors = kMaxSafetensorsTensors;
// What the graph made from them may hold, so that its size (and the cost of every estimate over
// it: memory plans per workload, the report's structure) is bounded whatever the names say:
// numbered layers, all stacks together (a config may say 4,096; released models have at most a
// few hundred), distinct layer shapes (a block each: a few in released models, one per layer
// in a NAS model of under 200), and tensor templates, every block and node together (experts
// folded; released checkpoints: a few thousand).
inline constexpr size_t kMaxCheckpointLayers = 16'384;
inline constexpr size_t kMaxCheckpointBlocks = 1'024;
inline constexpr size_t kMaxCheckpointSpecs = 65'536;

// `config` may be null (no config.json) or any JSON object; its generic keys are read when
// they are valid and ignored with a note when they are not. Errors: no tensors, a tensor stored
// in two shards, more than kMaxCheckpointTensors, a graph past the limits above.
Result<ModelGraph> BuildGraphFromCheckpoint(const std::vector<SafetensorsHeader>& headers,
                                            const nlohmann::json* config);

}  // namespace hubwatch
