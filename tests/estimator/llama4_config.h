#pragma once

// Llama 4 Scout's and Maverick's configs for the tests and the estimator benchmark. Their
// config.json files are gated and no verbatim copy was found: these carry only the dimensions
// of the released models as a public printout of Scout's Llama4Config and Maverick's published
// builder give them (tests/fixtures/models/truth-qwenvl.json says where); they are not fixtures.

#include <nlohmann/json.hpp>
#include <vector>

namespace hubwatch::testing {

// Scout: 16 experts in every layer, q/k norm. Maverick: 128 experts in every second layer, dense
// SwiGLU between, no q/k norm. Both: 3 chunked RoPE layers to 1 global NoPE layer.
inline nlohmann::json Llama4Config(bool maverick) {
  nlohmann::json text = {{"model_type", "llama4_text"},
                         {"attention_chunk_size", 8192},
                         {"head_dim", 128},
                         {"hidden_act", "silu"},
                         {"hidden_size", 5120},
                         {"interleave_moe_layer_step", maverick ? 2 : 1},
                         {"intermediate_size", 8192},
                         {"intermediate_size_mlp", 16384},
                         {"max_position_embeddings", maverick ? 1048576 : 262144},
                         {"num_attention_heads", 40},
                         {"num_experts_per_tok", 1},
                         {"num_hidden_layers", 48},
                         {"num_key_value_heads", 8},
                         {"num_local_experts", maverick ? 128 : 16},
                         {"use_qk_norm", !maverick},
                         {"vocab_size", 202048}};
  nlohmann::json vision = {{"model_type", "llama4_vision_model"},
                           {"hidden_size", 1408},
                           {"image_size", 336},
                           {"intermediate_size", 5632},
                           {"num_attention_heads", 16},
                           {"num_channels", 3},
                           {"num_hidden_layers", 34},
                           {"patch_size", 14},
                           {"pixel_shuffle_ratio", 0.5},
                           {"projector_input_dim", 4096},
                           {"projector_output_dim", 4096},
                           {"vision_output_dim", 4096}};
  if (!maverick) {  // Scout's config lists both schedules; Maverick's are derived here
    std::vector<int> moe_layers, no_rope_layers;
    for (int i = 0; i < 48; ++i) {
      moe_layers.push_back(i);
      no_rope_layers.push_back((i + 1) % 4 != 0);
    }
    text["moe_layers"] = moe_layers;
    text["no_rope_layers"] = no_rope_layers;
  }
  return {{"architectures", {"Llama4ForConditionalGeneration"}},
          {"model_type", "llama4"},
          {"text_config", text},
          {"vision_config", vision},
          {"tie_word_embeddings", false},
          {"torch_dtype", "bfloat16"}};
}

}  // namespace hubwatch::testing
