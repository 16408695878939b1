// Which layers of a Llama-family model attend through a sliding window (LayerSpec::window), by
// the row's Sliding rule (llama_family.h) or the config's layer_types: mistral's every layer,
// qwen2's upper layers, gemma2's alternation, gemma3's and cohere2's pattern, smollm3's NoPE
// layers, exaone4's L/G letters.

#include <nlohmann/json.hpp>

#include "estimator/graph_builder.h"
#include "estimator/llama_family.h"

namespace hubwatch::llama {
namespace {

using namespace build;  // NOLINT: internal helpers

// Sliding::kNoRope: whether layer i has no RoPE, from no_rope_layers (1: RoPE, 0: NoPE) or,
// without it, every no_rope_layer_interval-th layer (SmolLM3Config's default).
bool NoRopeLayer(ConfigReader& config, const std::vector<int64_t>& no_rope_layers, int64_t i) {
  if (!no_rope_layers.empty()) {
    return static_cast<size_t>(i) < no_rope_layers.size() &&
           no_rope_layers[static_cast<size_t>(i)] == 0;
  }
  return (i + 1) % config.Positive({"no_rope_layer_interval"}, kMaxLayers, 4) == 0;
}

// Sliding::kExaone: whether layer i is local, from sliding_window_pattern as a string of L/G
// letters repeated over the layers, or as an integer (every pattern-th layer global).
bool ExaoneLocalLayer(ConfigReader& config, int64_t i) {
  const nlohmann::json* pattern = config.Find({"sliding_window_pattern"});
  if (pattern && pattern->is_string() && !pattern->get<std::string>().empty()) {
    const std::string letters = pattern->get<std::string>();
    return letters[static_cast<size_t>(i) % letters.size()] == 'L';
  }
  return (i + 1) % config.Positive({"sliding_window_pattern"}, kMaxLayers, 4) != 0;
}

}  // namespace

void ApplySliding(const LlamaFamily& f, ConfigReader& config, ModelGraph& g) {
  std::optional<int64_t> window = config.OptionalPositive({"sliding_window"}, kMaxPositions);
  if (!window && f.sliding_window_default > 0 && !config.json().contains("sliding_window")) {
    window = f.sliding_window_default;
    config.Note("sliding_window absent: the architecture's default " +
                std::to_string(f.sliding_window_default));
  }
  // SmolLM3 slides only with use_sliding_window, whatever layer_types says.
  if (f.sliding == Sliding::kNoRope && !config.Flag({"use_sliding_window"}, false)) return;
  if (ApplyLayerTypes(config, g, window.value_or(0))) return;
  if (!window) return;
  const int64_t layers = static_cast<int64_t>(g.layers.size());
  const std::vector<int64_t> no_rope_layers =
      f.sliding == Sliding::kNoRope ? config.IntList({"no_rope_layers"}) : std::vector<int64_t>{};
  for (int64_t i = 0; i < layers; ++i) {
    bool sliding = false;
    switch (f.sliding) {
      case Sliding::kNone:
        break;
      case Sliding::kAllLayers:
        sliding = true;
        break;
      case Sliding::kQwen:
        sliding = config.Flag({"use_sliding_window"}, false) &&
                  i >= config.NonNegative({"max_window_layers"}, kMaxLayers, 28);
        break;
      case Sliding::kAlternate:
        sliding = i % 2 == 0;
        break;
      case Sliding::kPattern: {
        const int64_t pattern =
            config.Positive({"sliding_window_pattern"}, kMaxLayers, f.sliding_pattern_default);
        sliding = (i + 1) % pattern != 0;
        break;
      }
      case Sliding::kNoRope:
        sliding = NoRopeLayer(config, no_rope_layers, i);
        break;
      case Sliding::kExaone:
        sliding = ExaoneLocalLayer(config, i);
        break;
    }
    g.layers[static_cast<size_t>(i)].window = sliding ? *window : 0;
  }
}

}  // namespace hubwatch::llama
