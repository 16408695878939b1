#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/vl_composite.h"

namespace hubwatch::multimodal {

const nlohmann::json* SubConfig(ConfigReader& config, std::string_view key) {
  const nlohmann::json* part = config.Find({key});
  if (!part || !part->is_object()) {
    config.Fail(std::string(key) + " must be an object");
    return nullptr;
  }
  return part;
}

void Forward(ConfigReader& part, ConfigReader& config, std::string_view part_name) {
  if (!part.ok()) {
    std::string_view message = part.error().message;
    if (message.starts_with("config.json: ")) message.remove_prefix(13);
    config.Fail(std::string(part_name) + ": " + std::string(message));
  }
  for (std::string& note : part.TakeNotes()) config.Note(std::string(part_name) + ": " + note);
}

void AppendLanguageModel(ConfigReader& config, ModelGraph& g, const nlohmann::json& part,
                         std::string_view part_name, std::string_view model_type,
                         const std::string& prefix) {
  nlohmann::json typed = part;
  typed["model_type"] = model_type;
  Result<ModelGraph> text = BuildPart(config, typed, part_name, model_type);
  if (!text.ok()) {
    config.Fail(text.error().message);
    return;
  }
  ConfigReader reader(part, config.depth() + 1);
  g.max_positions = reader.Positive({"max_position_embeddings"}, kMaxPositions, 0,
                                    "max_position_embeddings absent");
  Forward(reader, config, part_name);
  if (!prefix.empty()) build::PrefixModules(*text, prefix);
  g.vocab = text->vocab;
  g.hidden = text->hidden;
  g.tied = text->tied;
  g.vocab_logits = text->vocab_logits;
  g.decodes = text->decodes;
  const std::string label =
      std::string(model_type) + " decoder, " + std::to_string(text->layers.size()) + " layers";
  build::AppendSection(g, std::move(*text), {"language model", label});
}

void MarkTower(ModelGraph& g, std::string family, int64_t width, int64_t tokens) {
  g.family = std::move(family);
  g.hidden = width;
  g.vocab_logits = false;
  g.decodes = false;
  g.max_positions = tokens;
}

DecoderDims ReadDecoderDims(ConfigReader& config, std::optional<int64_t> default_head_dim) {
  DecoderDims d{};
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  d.heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  d.kv_heads = config.Positive({"num_key_value_heads"}, kMaxHeads, d.heads);
  d.head_dim = build::ReadHeadDim(config, d.hidden, d.heads, default_head_dim);
  d.intermediate = config.Positive({"intermediate_size"}, kMaxWidth);
  d.activation = config.String({"hidden_act"}, "silu");
  return d;
}

Node DecoderAttention(const std::string& module, const std::string& prefix, const DecoderDims& d,
                      KvCaching caching, bool qk_norm) {
  AttentionShape shape;
  shape.kind = build::KindFromHeads(d.heads, d.kv_heads);
  shape.heads = d.heads;
  shape.kv_heads = d.kv_heads;
  shape.head_dim = shape.v_head_dim = d.head_dim;
  shape.caching = caching;
  if (qk_norm) shape.qk_norm_width = (d.heads + d.kv_heads) * d.head_dim;
  Node n = build::AttentionNode(module, shape);
  n.output_width = d.hidden;
  build::AddLinear(n, prefix + "q_proj", d.hidden, d.heads * d.head_dim, false);
  build::AddLinear(n, prefix + "k_proj", d.hidden, d.kv_heads * d.head_dim, false);
  build::AddLinear(n, prefix + "v_proj", d.hidden, d.kv_heads * d.head_dim, false);
  build::AddLinear(n, prefix + "o_proj", d.heads * d.head_dim, d.hidden, false);
  return n;
}

void DecoderShell(ConfigReader& config, ModelGraph& g, const DecoderDims& d, std::string family,
                  int64_t extra_rows) {
  g.family = std::move(family);
  g.vocab = d.vocab;
  g.hidden = d.hidden;
  g.base_prefix = "model.";
  g.tied = config.Flag({"tie_word_embeddings"}, false);
  g.embeddings.push_back(build::Embedding(
      "model.embed_tokens", d.vocab + extra_rows, d.hidden,
      extra_rows ? "token embedding (+" + std::to_string(extra_rows) + " image tokens)"
                 : "token embedding"));
  g.final_nodes.push_back(build::Norm("model.norm", d.hidden, NormKind::kRms, false));
  g.final_nodes.push_back(build::Head("lm_head", d.vocab, d.hidden, g.tied, false, false));
}

void AddSwiGlu(Node& n, const std::string& prefix, int64_t hidden, int64_t inter) {
  build::AddLinear(n, prefix + "gate_proj", hidden, inter, false);
  build::AddLinear(n, prefix + "up_proj", hidden, inter, false);
  build::AddLinear(n, prefix + "down_proj", inter, hidden, false);
}

BlockTemplate PreNormBlock(std::string label, const std::string& layer, int64_t hidden,
                           Node attention, Node feed_forward) {
  BlockTemplate b;
  b.label = std::move(label);
  b.nodes = build::NodeList(
      build::Norm(layer + "input_layernorm", hidden, NormKind::kRms, false), std::move(attention),
      build::Norm(layer + "post_attention_layernorm", hidden, NormKind::kRms, false),
      std::move(feed_forward));
  return b;
}

Node VisionAttention(const std::string& module, int64_t width, int64_t heads, int64_t head_dim) {
  AttentionShape shape;
  shape.kind = AttentionKind::kMha;
  shape.heads = shape.kv_heads = heads;
  shape.head_dim = shape.v_head_dim = head_dim;
  shape.caching = KvCaching::kNone;
  Node n = build::AttentionNode(module, shape);
  n.label = "bidirectional " + n.label;
  n.output_width = width;
  return n;
}

Node VisionQkvoAttention(const std::string& module, const std::string& prefix, int64_t width,
                         int64_t heads, bool bias) {
  Node n = VisionAttention(module, width, heads, width / heads);
  for (const char* name : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
    build::AddLinear(n, prefix + name, width, width, bias);
  }
  return n;
}

Node VisionFcMlp(const std::string& module, const std::string& prefix, int64_t width, int64_t inter,
                 const std::string& activation) {
  Node n = build::MlpNode(module, width, {inter, false, activation});
  build::AddLinear(n, prefix + "fc1", width, inter, true);
  build::AddLinear(n, prefix + "fc2", inter, width, true);
  return n;
}

int64_t BuildComposite(ConfigReader& config, ModelGraph& g, const Composite& c) {
  const nlohmann::json* text = SubConfig(config, "text_config");
  const nlohmann::json* vision = SubConfig(config, "vision_config");
  if (!text || !vision) return 0;
  Result<ModelGraph> tower = BuildPart(config, *vision, "vision_config", c.vision_type);
  if (!tower.ok()) {
    config.Fail(tower.error().message);
    return 0;
  }
  ConfigReader v(*vision, config.depth() + 1);
  const int64_t vision_out = v.Positive({"vision_output_dim"}, kMaxWidth);
  Forward(v, config, "vision_config");
  if (!config.ok()) return 0;
  const int64_t tile_tokens = tower->max_positions;
  build::PrefixModules(*tower, "vision_model.");
  const std::string label = c.tower_label + ", " + std::to_string(tower->layers.size()) + " layers";
  build::AppendSection(g, std::move(*tower), {"vision tower", label});
  const int section = static_cast<int>(g.sections.size());
  build::AppendSection(g, ModelGraph{}, {"projector", "linear"});
  nlohmann::json text_config = *text;
  if (!text_config.contains("tie_word_embeddings") && config.Has({"tie_word_embeddings"})) {
    text_config["tie_word_embeddings"] = config.json()["tie_word_embeddings"];
  }
  AppendLanguageModel(config, g, text_config, "text_config", c.text_type, "language_model.");
  if (!config.ok()) return 0;
  Node linear = build::MlpNode(c.projector_module, g.hidden, {vision_out, false, "identity"});
  linear.label =
      "linear projector " + std::to_string(vision_out) + " -> " + std::to_string(g.hidden);
  linear.input_width = vision_out;
  linear.section = section;
  build::AddLinear(linear, c.projector_tensor, vision_out, g.hidden, c.projector_bias);
  g.embeddings.push_back(std::move(linear));
  return tile_tokens;
}

}  // namespace hubwatch::multimodal
