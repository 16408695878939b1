#pragma once

// The KV cache a model keeps per token and per sequence, honouring GQA/MQA (kv_heads), explicit
// head_dim, MLA latents (one kv_lora_rank + rope vector per layer), per-layer sliding windows (a
// sliding layer holds at most `window` tokens), attention that caches nothing (an encoder: no
// KV cache at all), cross-attention (the encoder output's K and V, once per sequence) and
// sequence mixers that are not attention (kMixer: a fixed conv + recurrent state per sequence,
// whatever the context).
// Pure function; thread-safe.

#include <cstdint>
#include <vector>

#include "estimator/model_graph.h"

namespace hubwatch {

struct KvCache {
  double bytes_per_element = 2;
  // K + V bytes per token over all layers with every layer holding the full context: the
  // figure model cards and ground-truth tables quote.
  double bytes_per_token = 0;
  int64_t context = 0;
  // Bytes for one sequence of `context` tokens, sliding layers holding only their window.
  double bytes_per_sequence = 0;
  int64_t sliding_layers = 0;
  bool latent = false;  // MLA: the cache holds a latent, not K and V
  // Attention layers that cache their own K and V; 0: the model keeps no KV cache (an encoder,
  // a graph whose attention is not known).
  int64_t cached_attention_layers = 0;
  double cross_bytes_per_sequence = 0;  // cross-attention: fixed per sequence, in bytes_per_sequence
  // Mixer layers (SSM, linear attention, short conv): the state each keeps per sequence, which
  // does not grow with the context; included in bytes_per_sequence.
  double state_bytes_per_sequence = 0;
  int64_t state_layers = 0;
  std::vector<double> layer_bytes_per_token;     // per layer
  std::vector<double> layer_bytes_per_sequence;  // per layer, at `context`
};

KvCache ComputeKvCache(const ModelGraph& graph, int64_t context, double bytes_per_element);

}  // namespace hubwatch
