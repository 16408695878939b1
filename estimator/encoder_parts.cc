#include "estimator/encoder_parts.h"

#include "estimator/graph_builder.h"

namespace hubwatch::encoder {
namespace {}  // namespace

using namespace build;  // NOLINT: internal helpers

// Whether config.json names a class with a masked-LM / pretraining head, whose checkpoint then
// stores that head besides the base model.
bool NamesHeadClass(const ModelGraph& g) {
  return g.architecture.ends_with("ForMaskedLM") || g.architecture.ends_with("ForPreTraining");
}

void MarkEncoder(ModelGraph& g) {
  g.decodes = false;
  g.vocab_logits = false;
  g.tied = false;  // the modelled base model has no output head to tie
}

AttentionShape EncoderAttention(int64_t heads, int64_t head_dim) {
  AttentionShape shape;
  shape.kind = AttentionKind::kMha;
  shape.heads = shape.kv_heads = heads;
  shape.head_dim = shape.v_head_dim = head_dim;
  shape.caching = KvCaching::kNone;
  return shape;
}

// A lookup table: the tensor "<module>.<tensor>" [rows, width].
Node Table(const std::string& module, const std::string& tensor, int64_t rows, int64_t width,
           NodeKind kind, std::string label) {
  Node n;
  n.kind = kind;
  n.module = module;
  n.label = std::move(label);
  n.output_width = width;
  AddTensor(n, tensor, {rows, width});
  return n;
}

// The position_ids buffer [1, positions] (int64) BERT-style embeddings register; transformers
// no longer saves it (persistent=False), checkpoints from older versions do.
void AddPositionIds(Node& n, int64_t positions, bool stored) {
  TensorSpec& t = AddTensor(n, "position_ids", {1, positions}, TensorRole::kBuffer);
  t.dtype = "I64";
  t.stored = stored;
}

// Turns the parameters of a head node into what a base model does not load but a checkpoint of
// the head class stores.
Node OnDiskOnly(Node n, bool stored) {
  for (TensorSpec& t : n.tensors) {
    if (t.role == TensorRole::kParameter) t.role = TensorRole::kExtraOnDisk;
    t.stored = t.stored && stored;
  }
  return n;
}

// Says which head the checkpoint stores beside the base model (the extra_nodes).
void NoteHeads(ConfigReader& config, const ModelGraph& g, bool stored) {
  std::string modules;
  for (const Node& n : g.extra_nodes) modules += (modules.empty() ? "" : ", ") + n.module;
  config.Note(stored
                  ? "parameters are the base model's (what AutoModel loads); a " + g.architecture +
                        " checkpoint also stores " + modules + ", counted on disk only"
                  : "parameters are the base model's (what AutoModel loads); the " +
                        g.architecture + " head (" + modules +
                        ") is declared, but this family's reference checkpoint (a bare base model) "
                        "does not store it");
}

Node HeadNode(const std::string& module, std::string label, int64_t in, int64_t out) {
  Node n;
  n.kind = NodeKind::kHead;
  n.module = module;
  n.label = std::move(label);
  n.input_width = in;
  n.output_width = out;
  return n;
}

// A decoder weight tied to the token embedding: transformers saves it once, under the
// embedding's name. Untied, it is a weight of its own that the head class stores.
void AddDecoderWeight(Node& n, const std::string& name, int64_t vocab, int64_t width, bool tied) {
  TensorSpec& t =
      AddTensor(n, name, {vocab, width}, tied ? TensorRole::kTiedCopy : TensorRole::kParameter);
  t.stored = !tied;
}

// "<name>.weight" (and ".bias") [width]; an empty name adds "weight" itself.
void AddLayerNorm(Node& n, const std::string& name, int64_t width, bool bias) {
  const std::string prefix = name.empty() ? "" : name + ".";
  AddTensor(n, prefix + "weight", {width});
  if (bias) AddTensor(n, prefix + "bias", {width});
}

}  // namespace hubwatch::encoder
