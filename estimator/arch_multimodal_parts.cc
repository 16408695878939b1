#include "estimator/arch_multimodal_parts.h"

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"

namespace hubwatch::multimodal {
namespace {

using namespace build;  // NOLINT: internal helpers

// The defaults of the text config classes composites name, for the keys that decide a count:
// transformers builds text_config with them (LlavaConfig: CONFIG_MAPPING[model_type](**dict)).
struct TextDefaults {
  std::string_view model_type, config_class;
  const char* json;
};

const TextDefaults kTextDefaults[] = {
    {"llama", "LlamaConfig",
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
         "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 2048})"},
    {"mistral", "MistralConfig",
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "max_position_embeddings": 131072, "sliding_window": 4096})"},
    {"gemma", "GemmaConfig",
     R"({"vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576,
         "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16,
         "head_dim": 256, "max_position_embeddings": 8192})"},
    {"gemma2", "Gemma2Config",
     R"({"vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216,
         "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
         "head_dim": 256, "max_position_embeddings": 8192, "sliding_window": 4096})"},
    {"gemma3_text", "Gemma3TextConfig",
     R"({"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
         "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
         "head_dim": 256, "max_position_embeddings": 131072, "sliding_window": 4096})"},
};

const nlohmann::json& EmptyObject() {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return kEmpty;
}

// The part under `key`, or {} (the config class's defaults) when absent.
const nlohmann::json& PartOf(ConfigReader& config, const char* key) {
  const nlohmann::json* part = config.Find({key});
  if (part) return *part;
  config.Note(std::string(key) + " absent: its config class's defaults");
  return EmptyObject();
}

// text_config with its class's defaults for the keys it leaves out, each noted.
nlohmann::json WithTextDefaults(ConfigReader& config, const nlohmann::json& part,
                                std::string_view default_type) {
  if (!part.is_object()) return part;  // BuildPart reports it
  nlohmann::json filled = part;
  const auto type_it = part.find("model_type");
  const std::string type = type_it != part.end() && type_it->is_string()
                               ? type_it->get<std::string>()
                               : std::string(default_type);
  for (const TextDefaults& d : kTextDefaults) {
    if (d.model_type != type) continue;
    const nlohmann::json defaults = nlohmann::json::parse(d.json);
    for (auto it = defaults.begin(); it != defaults.end(); ++it) {
      if (filled.contains(it.key())) continue;
      filled[it.key()] = it.value();
      config.Note("text_config." + it.key() + " absent: " + std::string(d.config_class) +
                  "'s default " + it.value().dump());
    }
  }
  return filled;
}

// "vision_feature_layer": one layer (an integer) or several (a list) whose features are
// concatenated before the projector.
int64_t FeatureLayers(ConfigReader& config) {
  const nlohmann::json* v = config.Find({"vision_feature_layer"});
  if (!v || v->is_number_integer()) return 1;
  if (!v->is_array() || v->empty() || v->size() > static_cast<size_t>(kMaxLayers)) {
    config.Fail("vision_feature_layer must be an integer or a non-empty list of layers");
    return 1;
  }
  return static_cast<int64_t>(v->size());
}

Node ProjectorNode(const std::string& module, int64_t out, const std::string& act,
                   std::string label) {
  Node n = MlpNode(module, out, {out, false, act});
  n.label = std::move(label);
  return n;
}

std::string Widths(int64_t in, int64_t out) {
  return std::to_string(in) + " -> " + std::to_string(out);
}

}  // namespace

std::optional<ModelGraph> BuildTower(const Wrapper& w, ConfigReader& config) {
  Result<ModelGraph> tower =
      BuildPart(config, PartOf(config, "vision_config"), "vision_config", w.vision_type);
  if (!tower.ok()) {
    config.Fail(tower.error().message);
    return std::nullopt;
  }
  PrefixModules(*tower, std::string(w.vision_prefix));
  return std::move(tower).value();
}

std::optional<TextPart> BuildText(const Wrapper& w, ConfigReader& config) {
  const nlohmann::json filled =
      WithTextDefaults(config, PartOf(config, "text_config"), w.text_type);
  Result<ModelGraph> text = BuildPart(config, filled, "text_config", w.text_type);
  if (!text.ok()) {
    config.Fail(text.error().message);
    return std::nullopt;
  }
  TextPart part{std::move(text).value(), 0};
  ConfigReader reader(filled, config.depth() + 1);
  part.max_positions = reader.Positive({"max_position_embeddings"}, kMaxPositions, 0);
  if (!reader.ok()) {
    config.Fail("config.json: text_config: " + reader.error().message);
    return std::nullopt;
  }
  const std::string prefix(w.text_prefix);
  if (prefix.ends_with("text_model.")) {
    // The base model under the wrapper, its head at the root: model.layers -> model.text_model.
    auto rename = [&](std::vector<Node>& nodes) {
      for (Node& n : nodes) {
        if (n.module.starts_with("model.")) n.module = prefix + n.module.substr(6);
      }
    };
    rename(part.graph.embeddings);
    for (BlockTemplate& b : part.graph.blocks) rename(b.nodes);
    rename(part.graph.final_nodes);
  } else {
    PrefixModules(part.graph, prefix);
  }
  return part;
}

ModelGraph BuildProjector(const Wrapper& w, ConfigReader& config, int64_t vision_hidden,
                          int64_t text_hidden) {
  ModelGraph p;
  const std::string act = config.String({"projector_hidden_act"}, "gelu");
  switch (w.projector) {
    case Projector::kLlava: {
      const int64_t in = vision_hidden * FeatureLayers(config);
      const bool bias = config.Flag({"multimodal_projector_bias"}, true);
      Node n = ProjectorNode("multi_modal_projector", text_hidden, act,
                             "two-layer MLP (" + act + "), " + Widths(in, text_hidden));
      AddLinear(n, "linear_1", in, text_hidden, bias);
      AddLinear(n, "linear_2", text_hidden, text_hidden, bias);
      p.family = n.label;
      p.final_nodes.push_back(std::move(n));
      break;
    }
    case Projector::kPaliGemma: {
      const nlohmann::json& vision = PartOf(config, "vision_config");
      ConfigReader v(vision.is_object() ? vision : EmptyObject(), config.depth() + 1);
      const int64_t out = v.Positive({"projection_dim"}, kMaxWidth, 2048);
      Node n = ProjectorNode("multi_modal_projector", out, "none",
                             "linear projector, " + Widths(vision_hidden, out));
      AddLinear(n, "linear", vision_hidden, out, true);
      p.family = n.label;
      p.final_nodes.push_back(std::move(n));
      break;
    }
    case Projector::kMistral3: {
      const int64_t merge = config.Positive({"spatial_merge_size"}, 64, 2,
                                            "spatial_merge_size absent: 2 (the default)");
      const int64_t in = vision_hidden * FeatureLayers(config);
      const bool bias = config.Flag({"multimodal_projector_bias"}, false);
      p.final_nodes.push_back(
          Norm("multi_modal_projector.norm", vision_hidden, NormKind::kRms, false));
      Node merger = ProjectorNode("multi_modal_projector.patch_merger", vision_hidden, "none",
                                  "patch merger: " + std::to_string(merge) + "x" +
                                      std::to_string(merge) + " patches -> one token");
      AddLinear(merger, "merging_layer", vision_hidden * merge * merge, vision_hidden, false);
      p.final_nodes.push_back(std::move(merger));
      Node n = ProjectorNode("multi_modal_projector", text_hidden, act,
                             "two-layer MLP (" + act + "), " + Widths(in, text_hidden));
      AddLinear(n, "linear_1", in, text_hidden, bias);
      AddLinear(n, "linear_2", text_hidden, text_hidden, bias);
      p.family = "RMSNorm, patch merger, " + n.label;
      p.final_nodes.push_back(std::move(n));
      break;
    }
    case Projector::kGemma3: {
      p.final_nodes.push_back(
          Norm("multi_modal_projector.mm_soft_emb_norm", vision_hidden, NormKind::kRms, false));
      // A bare nn.Parameter [vision, text] applied by matmul, not an nn.Linear.
      Node n = ProjectorNode(
          "multi_modal_projector", text_hidden, "none",
          "average pooling, then projection matrix " + Widths(vision_hidden, text_hidden));
      AddTensor(n, "mm_input_projection_weight", {vision_hidden, text_hidden});
      p.family = "RMSNorm, " + n.label;
      p.final_nodes.push_back(std::move(n));
      break;
    }
    case Projector::kIdefics3: {
      const int64_t scale =
          config.Positive({"scale_factor"}, 64, 2, "scale_factor absent: 2 (the default)");
      const int64_t in = vision_hidden * scale * scale;
      Node n =
          ProjectorNode("model.connector.modality_projection", text_hidden, "none",
                        "pixel shuffle " + std::to_string(scale) + "x" + std::to_string(scale) +
                            ", then linear " + Widths(in, text_hidden) + " (no bias)");
      AddLinear(n, "proj", in, text_hidden, false);
      p.family = n.label;
      p.final_nodes.push_back(std::move(n));
      break;
    }
  }
  return p;
}

void NoteImageMemory(ConfigReader& config, int64_t patches_per_image) {
  config.Note(
      "memory: image tokens are ordinary positions of the decoder's sequence (they count in "
      "seq/context and in the KV cache); the vision tower caches nothing, and the plans run its "
      "layers over the same seq tokens as the decoder's rather than per image (one image is " +
      std::to_string(patches_per_image) + " patch positions through the tower)");
}

}  // namespace hubwatch::multimodal
