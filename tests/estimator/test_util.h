#pragma once

// Fixture access for the estimator tests, and checkpoint headers built from a model graph.

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "estimator/formats/safetensors_header.h"
#include "estimator/model_graph.h"

namespace hubwatch::testing {

inline std::string FixturePath(const std::string& relative) {
  return std::string(HUBWATCH_FIXTURES_DIR) + "/" + relative;
}

inline std::string ReadFixture(const std::string& relative) {
  std::ifstream in(FixturePath(relative), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json ReadJsonFixture(const std::string& relative) {
  return nlohmann::json::parse(ReadFixture(relative));
}

// "google/gemma-2-9b-it" -> "models/google__gemma-2-9b-it.config.json"
inline std::string ModelConfigPath(const std::string& repo) {
  std::string file = repo;
  file.replace(file.find('/'), 1, "__");
  return "models/" + file + ".config.json";
}

// Meta-Llama-3-8B's config.json with an eos_token_id list of `count` ids, none in the
// vocabulary (128256, 128257, ...): the hostile config of a million ids, built as text (1.4M ids
// are about 10 MB) rather than committed.
inline std::string ConfigWithEosIds(size_t count) {
  nlohmann::json config =
      nlohmann::json::parse(ReadFixture("models/meta-llama__Meta-Llama-3-8B.config.json"));
  config["eos_token_id"] = "@IDS@";
  std::string ids = "[";
  ids.reserve(count * 8 + 2);
  for (size_t i = 0; i < count; ++i) {
    if (i) ids += ',';
    ids += std::to_string(128256 + i);
  }
  ids += ']';
  std::string text = config.dump();
  text.replace(text.find("\"@IDS@\""), 7, ids);
  return text;
}

// A one-layer llama small enough to count by hand, shipped as a fine-grained FP8 checkpoint
// (as DeepSeek-V3 is): block Linear weights F8_E4M3 with an F32 scale per 32x32 block; the
// embedding, norms and head stay BF16.
inline nlohmann::json TinyFp8Llama() {
  return nlohmann::json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 256,
    "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 128, "max_position_embeddings": 512,
    "torch_dtype": "bfloat16", "tie_word_embeddings": false,
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [32, 32]}})");
}

// A safetensors header holding every tensor the reference checkpoint of `g` stores, each in its
// expected dtype (the tensor's forced dtype, else the model's), laid out contiguously. `edit`
// sees each tensor first and may change it, or drop it by returning false.
using TensorEdit = std::function<bool(const std::string& name, SafetensorsTensor& tensor)>;
inline SafetensorsHeader HeaderOf(const ModelGraph& g, const TensorEdit& edit = nullptr) {
  SafetensorsHeader h;
  ForEachTensor(g, [&](const std::string& name, const TensorSpec& spec, int64_t) {
    if (!spec.stored) return;
    SafetensorsTensor t;
    t.dtype = spec.dtype.empty() ? g.dtype : spec.dtype;
    t.shape = spec.shape.ToVector();
    t.elements = spec.ElementsPerCopy().value();
    if (edit && !edit(name, t)) return;
    t.data_begin = h.data_size;
    h.data_size += (t.elements * static_cast<uint64_t>(*SafetensorsDtypeBits(t.dtype)) + 7) / 8;
    t.data_end = h.data_size;
    h.tensors.emplace(name, t);
  });
  return h;
}

}  // namespace hubwatch::testing
