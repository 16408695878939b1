#pragma once

// The parts of a multimodal wrapper (arch_multimodal.cc): its row (which tower, which decoder,
// which projector, under which checkpoint names), the tower and decoder built through BuildPart
// from vision_config and text_config, and the projector between them. Internal to the estimator.

#include <cstdint>
#include <optional>
#include <string_view>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch::multimodal {

enum class Projector {
  kLlava,      // LlavaMultiModalProjector: linear_1, act, linear_2
  kPaliGemma,  // PaliGemmaMultiModalProjector: linear (vision hidden -> projection_dim)
  kMistral3,   // Mistral3MultiModalProjector: norm, patch_merger, linear_1, act, linear_2
  kGemma3,     // Gemma3MultiModalProjector: mm_soft_emb_norm, mm_input_projection_weight
  kIdefics3,   // Idefics3Connector: pixel shuffle, modality_projection.proj
};

struct Wrapper {
  std::string_view model_type = {};
  std::string_view family = {};
  std::string_view text_type = {};    // text_config's model_type when it names none
  std::string_view vision_type = {};  // vision_config's likewise
  std::string_view vision_prefix = "vision_tower.";
  // "language_model.": a ...ForCausalLM under the attribute (language_model.model.layers,
  // language_model.lm_head). "model.text_model.": the base model there, lm_head at the root.
  std::string_view text_prefix = "language_model.";
  Projector projector = Projector::kLlava;
};

// The tower of vision_config, its modules prefixed; nullopt after config.Fail.
std::optional<ModelGraph> BuildTower(const Wrapper& w, ConfigReader& config);

struct TextPart {
  ModelGraph graph;           // modules prefixed
  int64_t max_positions = 0;  // text_config's max_position_embeddings (or its class default)
};
// The decoder of text_config, with the config class's defaults for what it leaves out (noted);
// nullopt after config.Fail.
std::optional<TextPart> BuildText(const Wrapper& w, ConfigReader& config);

// The projector's nodes (its final_nodes) and, as its family, a label.
ModelGraph BuildProjector(const Wrapper& w, ConfigReader& config, int64_t vision_hidden,
                          int64_t text_hidden);

// Says how the memory plans treat image tokens and the tower's activations.
void NoteImageMemory(ConfigReader& config, int64_t patches_per_image);

}  // namespace hubwatch::multimodal
