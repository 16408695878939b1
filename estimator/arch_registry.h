#pragma once

// The table from model_type to the function that builds its graph. Internal to the estimator:
// architectures.cc fills it once from the Register* functions of the arch_*.cc files.

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch {

// Fills graph from config; reports problems through config.Fail / config.Note.
using ArchBuilder = std::function<void(ConfigReader& config, ModelGraph& graph)>;

// Composite configs nest their parts (text_config, vision_config, encoder ...) at most this deep.
inline constexpr int kMaxCompositeDepth = 4;

// The graph of one part of a composite config (`part` of `parent`: its text_config, its
// vision_config ...), built by the part's model_type (or `default_model_type` when it names
// none) through the same registry, its notes prefixed with `part_name`. Errors: the part is not
// an object, nests deeper than kMaxCompositeDepth, or names a model_type that is not modelled.
Result<ModelGraph> BuildPart(const ConfigReader& parent, const nlohmann::json& part,
                             std::string_view part_name, std::string_view default_model_type);

class ArchRegistry {
 public:
  void Add(std::string_view model_type, ArchBuilder builder) {
    entries_.emplace_back(std::string(model_type), std::move(builder));
  }
  const ArchBuilder* Find(std::string_view model_type) const {
    for (const auto& [type, builder] : entries_) {
      if (type == model_type) return &builder;
    }
    return nullptr;
  }
  std::vector<std::string_view> Types() const {
    std::vector<std::string_view> types;
    for (const auto& entry : entries_) types.emplace_back(entry.first);
    return types;
  }

 private:
  std::vector<std::pair<std::string, ArchBuilder>> entries_;
};

void RegisterLlamaFamily(ArchRegistry& registry);
// glm, glm4, glm4_moe, exaone4, olmo3, hunyuan_v1_dense, phimoe, ernie4_5_moe, gpt_oss
void RegisterLlamaFamilyMore(ArchRegistry& registry);
void RegisterGptFamily(ArchRegistry& registry);  // gpt2, gpt_neox, phi, phi-msft, phi3
void RegisterFalcon(ArchRegistry& registry);
void RegisterDeepseek(ArchRegistry& registry);
// bert, roberta, xlm-roberta, distilbert, mpnet, deberta-v2, modernbert, electra
void RegisterEncoders(ArchRegistry& registry);
// opt, bloom, gptj, gpt_bigcode, mpt, stablelm
void RegisterClassicDecoders(ArchRegistry& registry);
// t5, mt5, bart, marian, whisper (encoder-decoders)
void RegisterSeq2Seq(ArchRegistry& registry);
// Image towers: clip_vision_model, clip_text_model, siglip_vision_model, siglip_text_model,
// idefics3_vision, smolvlm_vision, vit, dinov2, pixtral; dual encoders clip, siglip
void RegisterVisionTowers(ArchRegistry& registry);
// llava, paligemma, mistral3, gemma3, idefics3, smolvlm
void RegisterMultimodal(ArchRegistry& registry);
void RegisterQwenVl(ArchRegistry& registry);  // qwen2_vl, qwen2_5_vl
void RegisterLlama4(ArchRegistry& registry);        // llama4, llama4_text
void RegisterLlama4Vision(ArchRegistry& registry);  // llama4_vision_model
void RegisterMllama(ArchRegistry& registry);        // mllama, mllama_text_model
void RegisterMllamaVision(ArchRegistry& registry);  // mllama_vision_model
void RegisterStateSpace(ArchRegistry& registry);  // mamba, falcon_mamba, mamba2
void RegisterHybrids(ArchRegistry& registry);     // jamba, bamba, lfm2, granitemoehybrid, falcon_h1
void RegisterQwen3Next(ArchRegistry& registry);   // qwen3_next, qwen3_5_moe(_text)

}  // namespace hubwatch
