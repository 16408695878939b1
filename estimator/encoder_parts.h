#pragma once

// The parts every encoder builder (arch_encoder.cc, arch_encoder_layouts.cc) shares: attention
// that caches nothing, lookup tables, LayerNorms, the heads a masked-LM or pretraining checkpoint
// stores beside the base model, and the marks that make a graph an encoder. Internal to the
// estimator.

#include <cstdint>
#include <string>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch::encoder {

// Whether config.json names a class with a masked-LM / pretraining head, whose checkpoint then
// stores that head besides the base model.
bool NamesHeadClass(const ModelGraph& g);
void MarkEncoder(ModelGraph& g);
AttentionShape EncoderAttention(int64_t heads, int64_t head_dim);
// A lookup table: the tensor "<module>.<tensor>" [rows, width].
Node Table(const std::string& module, const std::string& tensor, int64_t rows, int64_t width,
           NodeKind kind, std::string label);
// The position_ids buffer [1, positions] (int64) BERT-style embeddings register; transformers
// no longer saves it (persistent=False), checkpoints from older versions do.
void AddPositionIds(Node& n, int64_t positions, bool stored);
// Turns the parameters of a head node into what a base model does not load but a checkpoint of
// the head class stores.
Node OnDiskOnly(Node n, bool stored);
// Says which head the checkpoint stores beside the base model (the extra_nodes).
void NoteHeads(ConfigReader& config, const ModelGraph& g, bool stored);
Node HeadNode(const std::string& module, std::string label, int64_t in, int64_t out);
// A decoder weight tied to the token embedding: transformers saves it once, under the
// embedding's name. Untied, it is a weight of its own that the head class stores.
void AddDecoderWeight(Node& n, const std::string& name, int64_t vocab, int64_t width, bool tied);
// "<name>.weight" (and ".bias") [width]; an empty name adds "weight" itself.
void AddLayerNorm(Node& n, const std::string& name, int64_t width, bool bias);

// The encoders with builders of their own (arch_encoder_layouts.cc).
void BuildDistilBert(ConfigReader& config, ModelGraph& g);
void BuildDebertaV2(ConfigReader& config, ModelGraph& g);
void BuildModernBert(ConfigReader& config, ModelGraph& g);

}  // namespace hubwatch::encoder
