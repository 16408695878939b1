#include "estimator/kv_cache.h"

#include <algorithm>

namespace hubwatch {

KvCache ComputeKvCache(const ModelGraph& graph, int64_t context, double bytes_per_element) {
  KvCache kv;
  kv.bytes_per_element = bytes_per_element;
  kv.context = context;
  for (const LayerSpec& layer : graph.layers) {
    double elements = 0;     // per token: the layer's own K and V (or MLA latent)
    double cross_bytes = 0;  // per sequence: K and V of the encoder output
    double state_bytes = 0;  // per sequence: a mixer's conv + recurrent state
    for (const Node& node : graph.blocks[static_cast<size_t>(layer.block)].nodes) {
      if (node.kind == NodeKind::kMixer) {
        state_bytes += static_cast<double>(node.mixer.state_elements) * bytes_per_element;
        continue;
      }
      if (node.kind != NodeKind::kAttention) continue;
      const AttentionShape& a = node.attention;
      switch (a.caching) {
        case KvCaching::kNone:
          break;
        case KvCaching::kCross:
          cross_bytes += static_cast<double>(a.kv_heads * (a.head_dim + a.v_head_dim)) *
                         static_cast<double>(a.cross_tokens) * bytes_per_element;
          break;
        case KvCaching::kSelf:
          ++kv.cached_attention_layers;
          if (a.kind == AttentionKind::kMla) {
            elements += static_cast<double>(a.kv_lora_rank + a.rope_head_dim);
            kv.latent = true;
          } else {
            elements += static_cast<double>(a.kv_heads * (a.head_dim + a.v_head_dim));
          }
          break;
      }
    }
    const double per_token = elements * bytes_per_element;
    const int64_t held = layer.window > 0 ? std::min(context, layer.window) : context;
    kv.sliding_layers += layer.window > 0 && elements > 0;
    kv.bytes_per_token += per_token;
    kv.cross_bytes_per_sequence += cross_bytes;
    kv.state_bytes_per_sequence += state_bytes;
    kv.state_layers += state_bytes > 0;
    const double fixed = cross_bytes + state_bytes;
    kv.layer_bytes_per_token.push_back(per_token);
    kv.layer_bytes_per_sequence.push_back(per_token * static_cast<double>(held) + fixed);
    kv.bytes_per_sequence += per_token * static_cast<double>(held) + fixed;
  }
  return kv;
}

}  // namespace hubwatch
