#include "estimator/architectures.h"

#include <nlohmann/json.hpp>

#include "estimator/arch_registry.h"
#include "estimator/format.h"
#include "estimator/graph_builder.h"

namespace hubwatch {
namespace {

// No real model comes near this (DeepSeek-V3 is 6.7e11); beyond it the config is nonsense.
constexpr uint64_t kMaxPlausibleParams = uint64_t{1} << 50;

const ArchRegistry& Registry() {
  static const ArchRegistry registry = [] {
    ArchRegistry r;
    RegisterLlamaFamily(r);
    RegisterLlamaFamilyMore(r);
    RegisterGptFamily(r);
    RegisterFalcon(r);
    RegisterDeepseek(r);
    RegisterEncoders(r);
    RegisterClassicDecoders(r);
    RegisterSeq2Seq(r);
    RegisterVisionTowers(r);
    RegisterMultimodal(r);
    RegisterQwenVl(r);
    RegisterLlama4(r);
    RegisterLlama4Vision(r);
    RegisterMllama(r);
    RegisterMllamaVision(r);
    RegisterStateSpace(r);
    RegisterHybrids(r);
    RegisterQwen3Next(r);
    return r;
  }();
  return registry;
}

// Fine-grained FP8 checkpoints (quantization_config.quant_method "fp8" with weight_block_size,
// as DeepSeek-V3 ships): every Linear weight inside the blocks is stored as F8_E4M3 with an F32
// "<name>_scale_inv" of one scale per block. The scales are on disk, not parameters.
void ApplyFp8BlockQuantization(ConfigReader& config, ModelGraph& g) {
  const nlohmann::json* q = config.Find({"quantization_config"});
  if (!q || !q->is_object() || q->value("quant_method", "") != "fp8") return;
  const auto block = q->find("weight_block_size");
  if (block == q->end() || !block->is_array() || block->size() != 2 ||
      !(*block)[0].is_number_integer() || !(*block)[1].is_number_integer() ||
      (*block)[0].get<int64_t>() <= 0 || (*block)[1].get<int64_t>() <= 0) {
    config.Fail("quantization_config.weight_block_size must be two positive integers");
    return;
  }
  const int64_t bo = (*block)[0].get<int64_t>();
  const int64_t bi = (*block)[1].get<int64_t>();
  std::vector<std::string> skip;
  if (auto it = q->find("modules_to_not_convert"); it != q->end() && it->is_array()) {
    for (const nlohmann::json& m : *it) {
      if (m.is_string()) skip.push_back(m.get<std::string>());
    }
  }
  auto quantize = [&](Node& node) {
    std::vector<TensorSpec> scales;
    for (TensorSpec& t : node.tensors) {
      if (!t.is_linear() || t.name.find("eh_proj") != std::string::npos) continue;
      bool skipped = false;
      const std::string full_name = TensorName(node, t);
      for (const std::string& s : skip) skipped |= full_name.find(s) != std::string::npos;
      if (skipped) continue;
      t.dtype = "F8_E4M3";
      TensorSpec scale;
      scale.name =
          t.name.substr(0, t.name.size() - std::string_view("weight").size()) + "weight_scale_inv";
      scale.shape = {(t.linear_out + bo - 1) / bo, (t.linear_in + bi - 1) / bi};
      scale.role = TensorRole::kExtraOnDisk;
      scale.copies = t.copies;
      scale.dtype = "F32";
      scales.push_back(std::move(scale));
    }
    for (TensorSpec& s : scales) node.tensors.push_back(std::move(s));
  };
  for (BlockTemplate& b : g.blocks) {
    for (Node& n : b.nodes) quantize(n);
  }
  for (Node& n : g.extra_nodes) quantize(n);
  g.notes.push_back(
      "fine-grained FP8 checkpoint: block Linear weights stored as F8_E4M3 with F32 scales per " +
      std::to_string(bo) + "x" + std::to_string(bi) +
      " block; serving assumes serve.weight_bytes (--set serve.weight_bytes=1 serves the FP8 "
      "weights as stored)");
}

// Why reading `config` as the architecture of `g` (built by --assume) would be silently wrong,
// or "" when it is only approximate: a mixture of experts read as a dense model misses 88-91% of
// its parameters (Qwen3-235B-A22B, gpt-oss-20b, granite-3.1-1b-a400m read as llama); an encoder
// read as a decoder counts 46-66% too many (BERT and RoBERTa sizes read as llama).
std::string AssumeMisreads(ConfigReader& config, const ModelGraph& g) {
  bool moe_graph = false;
  for (const BlockTemplate& b : g.blocks) {
    for (const Node& n : b.nodes) moe_graph |= n.kind == NodeKind::kMoe;
  }
  for (std::string_view key : {"num_experts", "num_local_experts", "n_routed_experts",
                               "moe_num_experts", "num_experts_per_tok"}) {
    const nlohmann::json* v = config.Find({key});
    if (!moe_graph && v && v->is_number_integer() && v->get<int64_t>() > 1) {
      return "config.json describes a mixture of experts (" + std::string(key) + " " +
             std::to_string(v->get<int64_t>()) + ") and " + g.model_type +
             " is dense: every expert but one would be missing";
    }
  }
  const nlohmann::json* archs = config.Find({"architectures"});
  const std::string first = archs && archs->is_array() && !archs->empty() && (*archs)[0].is_string()
                                ? (*archs)[0].get<std::string>()
                                : "";
  if (g.decodes && (config.Has({"type_vocab_size"}) || first.ends_with("ForMaskedLM"))) {
    return "config.json describes an encoder (" +
           std::string(config.Has({"type_vocab_size"}) ? "type_vocab_size" : Clip(first)) +
           ") and " + g.model_type +
           " is a decoder: its MLP, norms and head would be counted wrongly";
  }
  return "";
}

}  // namespace

std::vector<std::string_view> SupportedArchitectures() { return Registry().Types(); }

Result<ModelGraph> BuildPart(const ConfigReader& parent, const nlohmann::json& part,
                             std::string_view part_name, std::string_view default_model_type) {
  // "text_config: vision_config: ...": the parent prefixes its own part name, and the reader of
  // config.json itself "config.json: ".
  const std::string where(part_name);
  if (parent.depth() + 1 > kMaxCompositeDepth) {
    return Error::InvalidInput(where + ": composite configs nest deeper than " +
                               std::to_string(kMaxCompositeDepth) + " levels");
  }
  if (!part.is_object()) return Error::InvalidInput(where + " is not a JSON object");
  ConfigReader reader(part, parent.depth() + 1);
  ModelGraph g;
  g.model_type = Clip(reader.String({"model_type"}, std::string(default_model_type)));
  const ArchBuilder* builder = reader.ok() ? Registry().Find(g.model_type) : nullptr;
  if (reader.ok() && !builder) {
    return Error::Unsupported("unsupported architecture: " + where + " has model_type \"" +
                              g.model_type + "\", which is not modelled");
  }
  if (builder) (*builder)(reader, g);
  if (!reader.ok()) {
    return Error{reader.error().code,
                 where + ": " + std::string(WithoutConfigPrefix(reader.error().message))};
  }
  for (std::string& note : reader.TakeNotes())
    g.notes.push_back(std::string(part_name) + ": " + note);
  return g;
}

Result<ModelGraph> BuildModelGraph(const nlohmann::json& config, const BuildOptions& options) {
  if (!config.is_object()) return Error::InvalidInput("config.json: not a JSON object");
  ConfigReader reader(config);
  ModelGraph g;
  // Upstream names, clipped: they reach the report, the notes and error messages.
  g.model_type = Clip(reader.String({"model_type"}, ""));
  if (const nlohmann::json* archs = reader.Find({"architectures"});
      archs && archs->is_array() && !archs->empty() && (*archs)[0].is_string()) {
    g.architecture = Clip((*archs)[0].get<std::string>());
  }
  if (!reader.ok()) return reader.error();

  const ArchBuilder* builder = Registry().Find(g.model_type);
  if (!builder) {
    const std::string what = g.model_type.empty() ? std::string("config.json has no model_type")
                                                  : "model_type \"" + g.model_type + "\"";
    if (options.assume.empty()) {
      return Error::Unsupported("unsupported architecture: " + what + " is not modelled (" +
                                std::to_string(SupportedArchitectures().size()) +
                                " model_types are: `hubwatch estimate --help` lists them); "
                                "--assume ARCH reads it as one of them, approximately");
    }
    builder = Registry().Find(options.assume);
    if (!builder) {
      return Error::InvalidInput("--assume " + Clip(options.assume) +
                                 ": not a modelled architecture (`hubwatch estimate --help` "
                                 "lists them)");
    }
    g.approximate = true;
    g.notes.push_back("APPROXIMATE: " + what + " is not modelled; read as " + options.assume +
                      " (--assume), so every count below is an approximation");
  }
  (*builder)(reader, g);
  ApplyFp8BlockQuantization(reader, g);
  if (!reader.ok()) return reader.error();
  if (g.approximate) {
    ModelGraph assumed_graph = g;
    assumed_graph.model_type = Clip(options.assume);
    if (std::string why = AssumeMisreads(reader, assumed_graph); !why.empty()) {
      return Error::InvalidInput("--assume " + Clip(options.assume) + " refused: " + why +
                                 " (with safetensors headers, a model that is not modelled is "
                                 "estimated from its checkpoint's tensors instead)");
    }
  }

  // A composite's builder may have taken it from a part (Qwen3.5's text_config.dtype).
  const std::string torch_dtype = reader.String({"torch_dtype", "dtype"}, "");
  if (!torch_dtype.empty() || g.dtype.empty()) g.dtype = build::SafetensorsDtype(torch_dtype);
  if (g.dtype.empty()) {
    g.dtype = "F32";  // what transformers loads when the config does not say
    reader.Note(torch_dtype.empty()
                    ? "torch_dtype absent: float32, transformers' default"
                    : "torch_dtype \"" + Clip(torch_dtype) + "\" not recognised: float32 assumed");
  }
  if (g.max_positions == 0) {
    g.max_positions = reader.Positive({"max_position_embeddings", "n_positions"}, kMaxPositions, 0,
                                      "max_position_embeddings absent");
  }
  for (std::string& note : reader.TakeNotes()) g.notes.push_back(std::move(note));
  if (!reader.ok()) return reader.error();

  Result<ParamCounts> counts = CountParameters(g);
  if (!counts.ok()) return counts.error();
  if (counts->on_disk > kMaxPlausibleParams) {
    return Error::InvalidInput("config.json describes " + std::to_string(counts->on_disk) +
                               " parameters, which is absurd (limit " +
                               std::to_string(kMaxPlausibleParams) + ")");
  }
  return g;
}

}  // namespace hubwatch
