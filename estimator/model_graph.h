#pragma once

// ModelGraph: the structure of a decoder-only model as its Hugging Face implementation builds
// it, down to every parameter tensor under its checkpoint name and shape.
//
// A graph is: embedding nodes, a sequence of layers (each an instance of a block template plus
// its attention window), final nodes (norm, head), and nodes stored on disk that transformers
// does not load (DeepSeek-V3's multi-token-prediction layer). It is built from the modelled
// structure of an architecture (architectures.h) or, for one that is not modelled, from the
// tensors its checkpoint stores (checkpoint_graph.h): then its nodes are opaque groups of
// tensors, counted exactly, whose activations are estimated from their linear layers. Block templates are shared by the
// layers that use them, so a 42-layer model holds one template, not 42 copies; tensor names
// carry "{i}" for the layer index and "{e}" for the expert index and are expanded on demand.
//
// Plain values built by BuildModelGraph (architectures.h); immutable afterwards, so safe to read
// from many threads.

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/count.h"

namespace hubwatch {

enum class TensorRole {
  kParameter,    // a parameter transformers loads and trains
  kBuffer,       // a non-trainable buffer (gpt2's causal mask attn.bias, rotary inv_freq)
  kTiedCopy,     // a tied head stored a second time in the checkpoint (falcon's lm_head)
  kExtraOnDisk,  // stored in the checkpoint but not loaded (MTP layers, quantization scales)
};

// A tensor shape of up to five dimensions (a Conv3d weight: Qwen2-VL's patch embedding), held
// inline: a graph holds many, and allocating each would dominate building it. Plain value type.
class TensorShape {
 public:
  static constexpr size_t kMaxRank = 5;
  TensorShape() = default;
  // REQUIRES: dims.size() <= kMaxRank
  TensorShape(std::initializer_list<int64_t> dims) {  // NOLINT: implicit by design
    for (int64_t d : dims) dims_[rank_++] = d;
  }
  size_t size() const { return rank_; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }
  std::vector<int64_t> ToVector() const { return {begin(), end()}; }
  bool operator==(const std::vector<int64_t>& other) const {
    return std::equal(begin(), end(), other.begin(), other.end());
  }

 private:
  std::array<int64_t, kMaxRank> dims_{};
  uint8_t rank_ = 0;
};

struct TensorSpec {
  std::string name;  // under the node's module ("q_proj.weight"); "{e}" expert index
  TensorShape shape;
  TensorRole role = TensorRole::kParameter;
  // Whether the reference checkpoint of this architecture stores the tensor; counts towards
  // params.on_disk only when true. Buffers some conversions store and others not are false.
  bool stored = true;
  int64_t copies = 1;     // experts: `copies` tensors named with "{e}" = 0..copies-1
  bool routed = false;    // a routed expert's tensor: only top_k of `copies` are active
  // One tensor holding every expert of a layer along its first dimension (granitemoe's
  // input_linear, gpt-oss's gate_up_proj): when routed, top_k of shape[0] slices are active.
  bool experts_in_dim0 = false;
  int64_t linear_in = 0;  // a Linear/Conv1D weight: its in and out features (LoRA, QLoRA)
  int64_t linear_out = 0;
  std::string dtype;  // forced checkpoint dtype ("F32" for scales); empty: model dtype
  // Parameters per stored element: 1, or what a packed quantized tensor holds in one element
  // (GPTQ/AWQ 4-bit in int32: 8; NF4 or MXFP4 in a byte: 2). `shape` is the stored shape.
  int64_t packing = 1;

  bool is_linear() const { return linear_in > 0; }
  // Stored elements (of every copy): what the checkpoint holds.
  Count ElementsPerCopy() const;
  Count Elements() const { return ElementsPerCopy() * Count(static_cast<uint64_t>(copies)); }
  // The parameters those elements hold: Elements() unless packed.
  Count Parameters() const { return Elements() * Count(static_cast<uint64_t>(packing)); }
  Count ParametersPerCopy() const {
    return ElementsPerCopy() * Count(static_cast<uint64_t>(packing));
  }
  // The parameters of one expert: a copy, or one slice of an experts_in_dim0 tensor.
  Count ParametersPerExpert() const;
};

// kOpaque: tensors a checkpoint stores under one module whose structure is not modelled.
// kMixer: a sequence mixer that is not softmax attention (a state-space model, linear attention,
// a short convolution): it keeps a fixed state per sequence instead of a KV cache.
enum class NodeKind {
  kEmbedding,
  kPositionEmbedding,
  kNorm,
  kAttention,
  kMlp,
  kMoe,
  kHead,
  kOpaque,
  kMixer
};
enum class NormKind { kRms, kLayer, kLayerNoAffine };
enum class AttentionKind { kMha, kGqa, kMqa, kMla };
// What an attention layer keeps between decoding steps: K and V of every token it has seen (a
// causal decoder), nothing (an encoder or a vision tower reads its whole input at once), or K
// and V of the encoder's output, computed once per sequence (cross-attention).
enum class KvCaching { kSelf, kNone, kCross };

struct AttentionShape {
  AttentionKind kind = AttentionKind::kMha;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;        // q/k head size (MLA: nope + rope)
  int64_t v_head_dim = 0;      // v head size (= head_dim except MLA)
  int64_t q_lora_rank = 0;     // MLA: 0 when q is projected directly
  int64_t kv_lora_rank = 0;    // MLA latent width
  int64_t rope_head_dim = 0;   // MLA: decoupled rope key width
  int64_t qk_norm_width = 0;   // elements normalised per token by q_norm + k_norm (0: none)
  bool logit_softcap = false;  // gemma2: tanh soft-capping of the scores
  double dropout = 0;          // on the attention probabilities in training (eager: kept)
  KvCaching caching = KvCaching::kSelf;
  int64_t cross_tokens = 0;  // kCross: the encoder positions each sequence caches
};

// What a kMixer node runs, named after the transformers module it mirrors.
enum class MixerKind {
  kMamba1,         // MambaMixer: selective scan, a state of d_state per channel
  kMamba2,         // Mamba2Mixer (SSD): a state of head_dim x d_state per head, B/C in groups
  kGatedDeltaNet,  // Qwen3NextGatedDeltaNet: linear attention, a key x value matrix per head
  kShortConv,      // Lfm2ShortConv: a gated depthwise causal convolution, no SSM state
};

struct MixerShape {
  MixerKind kind = MixerKind::kMamba1;
  int64_t d_inner = 0;   // channels the scan runs over (expand x hidden; GDN: value width)
  int64_t d_state = 0;   // SSM state per channel (mamba1) or head (mamba2); GDN: key head dim
  int64_t n_groups = 0;  // mamba2: groups sharing B and C; GDN: key heads
  int64_t heads = 0;     // mamba2 / GDN: (value) heads
  int64_t conv_kernel = 0;    // causal depthwise conv width
  int64_t conv_channels = 0;  // channels the conv runs over
  // Elements one sequence keeps between decoding steps, whatever its length: the last
  // conv_kernel inputs of the conv (conv_channels x conv_kernel, as transformers' cache holds
  // them) plus the recurrent state.
  int64_t state_elements = 0;
};

struct MlpShape {
  int64_t intermediate = 0;
  bool gated = false;      // act(gate(x)) * up(x)
  std::string activation;  // "silu", "gelu_pytorch_tanh", ...
};

struct MoeShape {
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t expert_intermediate = 0;
  int64_t shared_intermediate = 0;  // all shared experts together (0: none)
  bool gated = true;
  std::string activation;
};

struct Node {
  NodeKind kind = NodeKind::kNorm;
  std::string module;        // "model.layers.{i}.self_attn"
  std::string label;         // "GQA attention, 16 query / 8 KV heads, head_dim 256"
  int64_t output_width = 0;  // last dimension of the output, per token
  int64_t input_width = 0;   // last dimension of the input where it differs (the head)
  bool saves_input = true;   // false when it shares its input tensor with the node before it
  std::vector<TensorSpec> tensors;
  // Meaningful for the matching kind only.
  AttentionShape attention;
  MlpShape mlp;
  MoeShape moe;
  MixerShape mixer;
  NormKind norm = NormKind::kRms;
  int section = 0;  // index into ModelGraph::sections (0 when the model is one part)
};

// A part of a composite model, counted and shown on its own: a vision tower, an audio encoder,
// a projector, the text decoder, a T5 encoder. A graph of one part has none listed.
struct GraphSection {
  std::string name;   // "vision tower"
  std::string label;  // "SigLIP ViT, 27 layers, 14x14 patches"
};

struct BlockTemplate {
  std::string label;  // "Gemma-2 decoder block"
  std::vector<Node> nodes;
};

struct LayerSpec {
  int block = 0;       // index into ModelGraph::blocks
  int64_t window = 0;  // sliding-window length in tokens; 0 = full attention
  int64_t number = -1;  // the {i} of its tensor names; -1: its place in ModelGraph::layers
};

// Where a graph's structure comes from.
enum class GraphSource {
  kModelled,           // the architecture's layout, tensor by tensor (architectures.h)
  kCheckpointTensors,  // the checkpoint's tensors, grouped by module (checkpoint_graph.h)
};

struct ModelGraph {
  GraphSource source = GraphSource::kModelled;
  std::string model_type;    // "gemma2"
  std::string architecture;  // "Gemma2ForCausalLM"
  std::string family;        // one line on what makes this architecture what it is
  std::string base_prefix;   // module prefix some checkpoints omit ("transformer.")
  std::string dtype;         // torch_dtype as a safetensors dtype ("BF16")
  int64_t vocab = 0;
  int64_t hidden = 0;
  int64_t max_positions = 0;
  bool tied = false;
  bool approximate = false;  // built by --assume for an unsupported model_type
  // Whether training computes vocabulary-wide logits (a language-model head); an encoder
  // trained for embeddings or a tower has no such loss.
  bool vocab_logits = true;
  // Whether its loss upcasts the logits to fp32 (transformers' shared ForCausalLMLoss), or
  // computes cross-entropy in the activations' dtype on a shifted copy (older implementations:
  // gpt_bigcode).
  bool loss_in_fp32 = true;
  // Whether it generates token by token, its KV cache growing with the context (a decoder), or
  // reads a whole input in one forward pass per request (an encoder: serving holds that pass's
  // activations per sequence instead of a cache).
  bool decodes = true;
  std::vector<Node> embeddings;
  std::vector<BlockTemplate> blocks;
  std::vector<LayerSpec> layers;
  std::vector<Node> final_nodes;
  std::vector<Node> extra_nodes;   // on disk only
  std::vector<std::string> notes;  // defaults used and structural assumptions
  std::vector<GraphSection> sections;  // a composite's parts; empty: one part
};

// Parameter and element counts. All exact; CountParameters fails instead of overflowing.
// Parameters are logical (a packed 4-bit tensor's elements times its packing); elements are
// what the checkpoint stores.
struct ParamCounts {
  uint64_t total = 0;          // unique trainable parameters (tied weights once)
  uint64_t on_disk = 0;        // elements the reference checkpoint stores
  uint64_t active = 0;         // parameters used per token (MoE: top_k routed experts)
  uint64_t buffers = 0;        // stored buffer elements
  uint64_t tied_copies = 0;    // stored duplicates of tied weights
  uint64_t extra_on_disk = 0;  // stored, not loaded
  uint64_t embedding = 0;      // by part; these sum to total
  uint64_t attention = 0;
  uint64_t mlp = 0;  // dense MLPs and MoE (experts, routers, shared experts)
  uint64_t norm = 0;
  uint64_t head = 0;
  uint64_t other = 0;  // opaque modules (a graph built from a checkpoint's tensors)
  uint64_t mixer = 0;  // non-attention sequence mixers (SSM, linear attention, short conv)
  std::vector<uint64_t> by_section;  // parameters per ModelGraph::sections entry (empty: none)
};

Result<ParamCounts> CountParameters(const ModelGraph& graph);

// Parameters of one node / one layer / the embeddings / the final nodes (role kParameter).
Count NodeParams(const Node& node);
Count LayerParams(const ModelGraph& graph, size_t layer);

// How many layers use each block template.
std::vector<uint64_t> BlockUses(const ModelGraph& graph);

// Calls fn(spec, times) for every tensor template, `times` being how many layers use it (1
// outside the blocks). Cheap: names are not expanded.
template <class Fn>
void ForEachTensorSpec(const ModelGraph& graph, Fn&& fn) {
  const std::vector<uint64_t> uses = BlockUses(graph);
  auto visit = [&](const std::vector<Node>& nodes, uint64_t times) {
    for (const Node& node : nodes) {
      for (const TensorSpec& t : node.tensors) fn(t, times);
    }
  };
  visit(graph.embeddings, 1);
  for (size_t b = 0; b < graph.blocks.size(); ++b) visit(graph.blocks[b].nodes, uses[b]);
  visit(graph.final_nodes, 1);
  visit(graph.extra_nodes, 1);
}

// Calls fn(name, spec, layer) for every tensor with its name expanded ({i}, {e}); layer is -1
// outside the blocks. Expert tensors are visited once per expert.
void ForEachTensor(
    const ModelGraph& graph,
    const std::function<void(const std::string& name, const TensorSpec& spec, int64_t layer)>& fn);

// The tensor's checkpoint name with "{i}"/"{e}" unexpanded:
// "model.layers.{i}.self_attn.q_proj.weight".
std::string TensorName(const Node& node, const TensorSpec& tensor);

// "[256000, 3584]"
std::string ShapeString(const std::vector<int64_t>& shape);
inline std::string ShapeString(const TensorShape& shape) { return ShapeString(shape.ToVector()); }

}  // namespace hubwatch
