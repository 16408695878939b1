// Pure state-space decoders: mamba (MambaForCausalLM), falcon_mamba (FalconMambaForCausalLM)
// and mamba2 (Mamba2ForCausalLM), rows of one layout: backbone.embeddings, per layer an RMSNorm
// and a mixer (ssm_parts.h), backbone.norm_f, lm_head. No attention: the KV cache is the fixed
// conv + SSM state per sequence the mixers keep.

#include <string>
#include <string_view>

#include "estimator/arch_registry.h"
#include "estimator/graph_builder.h"
#include "estimator/ssm_parts.h"

namespace hubwatch {
namespace {

using namespace build;  // NOLINT: internal helpers

struct SsmModel {
  std::string_view model_type;
  std::string_view family;
  bool mamba2;       // Mamba2Mixer, else MambaMixer
  bool tie_default;  // tie_word_embeddings when config.json omits it
};

constexpr SsmModel kSsmModels[] = {
    {"mamba", "Mamba: selective state-space layers, no attention", false, true},
    {"falcon_mamba",
     "FalconMamba: Mamba layers with weightless RMSNorms on B, C and dt, no attention", false,
     true},
    {"mamba2", "Mamba-2: state-space duality (SSD) layers in heads, no attention", true, false},
};

void BuildSsm(const SsmModel& m, ConfigReader& config, ModelGraph& g) {
  const int64_t vocab = config.Positive({"vocab_size"}, kMaxVocab);
  const int64_t hidden = config.Positive({"hidden_size", "d_model"}, kMaxWidth);
  const int64_t layers = config.Positive({"num_hidden_layers", "n_layer"}, kMaxLayers);
  g.family = m.family;
  g.vocab = vocab;
  g.hidden = hidden;
  g.base_prefix = "backbone.";
  g.tied =
      config.Flag({"tie_word_embeddings"}, m.tie_default,
                  m.tie_default ? "tie_word_embeddings absent: tied (the architecture's default)"
                                : "tie_word_embeddings absent: untied (the default)");
  Node mixer =
      m.mamba2 ? ssm::Mamba2Mixer("backbone.layers.{i}.mixer",
                                  ssm::ReadMamba2(config, hidden, ssm::MambaKeys::kMamba))
               : ssm::Mamba1Mixer("backbone.layers.{i}.mixer",
                                  ssm::ReadMamba1(config, hidden, ssm::MambaKeys::kMamba), false);
  g.embeddings.push_back(Embedding("backbone.embeddings", vocab, hidden, "token embedding"));
  BlockTemplate block;
  block.label = std::string(m.model_type) + " block";
  block.nodes =
      NodeList(Norm("backbone.layers.{i}.norm", hidden, NormKind::kRms, false), std::move(mixer));
  g.blocks.push_back(std::move(block));
  UniformLayers(g, layers);
  g.final_nodes.push_back(Norm("backbone.norm_f", hidden, NormKind::kRms, false));
  g.final_nodes.push_back(Head("lm_head", vocab, hidden, g.tied, false, false));
}

}  // namespace

void RegisterStateSpace(ArchRegistry& registry) {
  for (const SsmModel& m : kSsmModels) {
    registry.Add(m.model_type,
                 [&m](ConfigReader& config, ModelGraph& graph) { BuildSsm(m, config, graph); });
  }
}

}  // namespace hubwatch
