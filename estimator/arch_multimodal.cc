// Multimodal wrappers: an image tower, a projector into the text model's width, and a text
// decoder, as three sections ("vision tower", "projector", "language model"). Covers llava
// (LlavaForConditionalGeneration), paligemma, mistral3, gemma3 (Gemma3ForConditionalGeneration),
// idefics3 and smolvlm, rows of kWrappers below that differ in their default sub-config types,
// their checkpoint names and their projector.
//
// The tower and the decoder are built through BuildPart from vision_config and text_config, so
// they are the registry's own builders (arch_vision*.cc, arch_llama.cc). A composite config's
// text_config often lists only what differs from its config class (llava-1.5's names no
// hidden_size): transformers then applies that class's defaults, and so does TextWithDefaults.
//
// Names are those of the checkpoints these configs were released with (transformers < 4.52):
// "language_model.model.layers.{i}", "vision_tower.vision_model.encoder.layers.{i}",
// "multi_modal_projector.linear_1"; Idefics3 nests tower and decoder under "model.".
// The tower caches nothing (KvCaching::kNone); only the decoder's layers cache K/V and make
// vocabulary logits.

#include <nlohmann/json.hpp>

#include "estimator/arch_multimodal_parts.h"
#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

using namespace build;       // NOLINT: internal helpers
using namespace multimodal;  // NOLINT: the wrappers' shared parts

const Wrapper kWrappers[] = {
    {.model_type = "llava",
     .family = "LLaVA: CLIP vision tower, two-layer MLP projector, Llama decoder",
     .text_type = "llama",
     .vision_type = "clip_vision_model",
     .projector = Projector::kLlava},
    {.model_type = "paligemma",
     .family = "PaliGemma: SigLIP vision tower, linear projector, Gemma decoder (prefix-LM)",
     .text_type = "gemma",
     .vision_type = "siglip_vision_model",
     .projector = Projector::kPaliGemma},
    {.model_type = "mistral3",
     .family = "Mistral-3: Pixtral vision tower, RMSNorm + patch merger + MLP projector, "
               "Mistral decoder",
     .text_type = "mistral",
     .vision_type = "pixtral",
     .projector = Projector::kMistral3},
    {.model_type = "gemma3",
     .family = "Gemma-3 multimodal: SigLIP vision tower, pooled RMSNorm + matrix projector, "
               "Gemma-3 decoder",
     .text_type = "gemma3_text",
     .vision_type = "siglip_vision_model",
     .projector = Projector::kGemma3},
    {.model_type = "idefics3",
     .family = "Idefics3: SigLIP-style vision tower, pixel-shuffle connector, Llama decoder",
     .text_type = "llama",
     .vision_type = "idefics3_vision",
     .vision_prefix = "model.vision_model.",
     .text_prefix = "model.text_model.",
     .projector = Projector::kIdefics3},
    {.model_type = "smolvlm",
     .family = "SmolVLM: Idefics3 layout (SigLIP-style tower, pixel-shuffle connector, Llama "
               "decoder)",
     .text_type = "llama",
     .vision_type = "smolvlm_vision",
     .vision_prefix = "model.vision_model.",
     .text_prefix = "model.text_model.",
     .projector = Projector::kIdefics3},
};

void BuildWrapper(const Wrapper& w, ConfigReader& config, ModelGraph& g) {
  std::optional<ModelGraph> tower = BuildTower(w, config);
  if (!tower) return;
  std::optional<TextPart> text = BuildText(w, config);
  if (!text) return;
  const int64_t vision_hidden = tower->hidden;
  const std::string tower_label = tower->family;
  const size_t tower_layers = tower->layers.size();
  const int64_t patches = tower->max_positions;
  g.family = w.family;
  g.vocab = text->graph.vocab;
  g.hidden = text->graph.hidden;
  g.tied = text->graph.tied;
  g.max_positions = text->max_positions;
  AppendSection(g, std::move(tower).value(),
                {"vision tower", tower_label.substr(0, tower_label.find(':')) + ", " +
                                     std::to_string(tower_layers) + " layers"});
  ModelGraph projector = BuildProjector(w, config, vision_hidden, g.hidden);
  const std::string projector_label = projector.family;
  AppendSection(g, std::move(projector), {"projector", projector_label});
  const std::string text_label = text->graph.family.substr(0, text->graph.family.find(':')) + ", " +
                                 std::to_string(text->graph.layers.size()) + " layers";
  AppendSection(g, std::move(text->graph), {"language model", text_label});
  NoteImageMemory(config, patches);
}

}  // namespace

void RegisterMultimodal(ArchRegistry& registry) {
  for (const Wrapper& w : kWrappers) {
    registry.Add(w.model_type,
                 [&w](ConfigReader& config, ModelGraph& graph) { BuildWrapper(w, config, graph); });
  }
}

}  // namespace hubwatch
