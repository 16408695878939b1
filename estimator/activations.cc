#include "estimator/activations.h"

#include <algorithm>

namespace hubwatch {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

double AttentionTraining(const Node& node, int64_t seq, const Assumptions& a) {
  const AttentionShape& s = node.attention;
  const double act = a.activation_bytes;
  double elements = node.saves_input ? D(node.output_width) : 0;  // input width == hidden
  double fp32 = 0;
  if (s.kind == AttentionKind::kMla) {
    if (s.q_lora_rank) elements += 2 * D(s.q_lora_rank);  // q_a output, q_b input
    elements += D(s.kv_lora_rank + s.rope_head_dim);      // kv_a output
    elements += D(s.kv_lora_rank);                        // kv_b input (normed latent)
    fp32 += s.q_lora_rank ? 8 : 4;                        // fp32 rstd of the latent norms
  }
  // q, k, v as attention reads them, and the attention output (the o_proj input).
  elements += D(s.heads * s.head_dim) + D(s.kv_heads * s.head_dim) + D(s.kv_heads * s.v_head_dim) +
              D(s.heads * s.v_head_dim);
  if (s.qk_norm_width) {
    elements += D(s.qk_norm_width);  // pre-norm q and k
    fp32 += 4 * D(s.heads + s.kv_heads);
  }
  if (a.eager_attention && a.checkpointing == Checkpointing::kSelective) {
    // Selective checkpointing recomputes the attention core: neither scores nor expansions kept.
  } else if (a.eager_attention) {
    double scores = D(s.heads) * D(seq) * (s.logit_softcap ? 2 : 1);  // softmax (+ tanh) output
    elements += scores;
    // Dropout on the probabilities keeps what it let through, and a one-byte mask.
    if (s.dropout > 0) {
      elements += D(s.heads) * D(seq);
      fp32 += D(s.heads) * D(seq);  // bytes, like the other fp32 terms: the bool mask
    }
    // matmul keeps K and V after repeat_kv expanded them to every query head.
    elements += D(s.heads - s.kv_heads) * D(s.head_dim + s.v_head_dim);
  } else {
    fp32 += 4 * D(s.heads);  // log-sum-exp per head
  }
  return elements * act + fp32;
}

// Intermediates an MLP keeps per intermediate channel: gated, gate + up + act(gate) + product
// (selective checkpointing: gate + up, the elementwise rest recomputed); plain, pre- and
// post-activation (selective: pre only).
double MlpIntermediates(bool gated, const Assumptions& a) {
  const bool selective = a.checkpointing == Checkpointing::kSelective;
  return gated ? (selective ? 2 : 4) : (selective ? 1 : 2);
}

double MlpTraining(const Node& node, const Assumptions& a) {
  const double input = node.saves_input ? D(node.output_width) : 0;
  const double inter = D(node.mlp.intermediate) * MlpIntermediates(node.mlp.gated, a);
  return (input + inter) * a.activation_bytes;
}

double MoeTraining(const Node& node, const Assumptions& a) {
  const MoeShape& m = node.moe;
  double elements = node.saves_input ? D(node.output_width) : 0;
  const double kept = MlpIntermediates(true, a);
  elements += D(m.top_k) * (D(node.output_width) + kept * D(m.expert_intermediate));
  elements += kept * D(m.shared_intermediate);
  return elements * a.activation_bytes + 4 * D(m.experts);  // fp32 router probabilities
}

// A module whose structure is not modelled (a graph from a checkpoint's tensors): autograd keeps
// at least the input of every linear layer, which its weight gradient needs; a token visits
// top_k of routed experts. What elementwise functions between them keep is not counted.
double OpaqueTraining(const Node& node, const Assumptions& a) {
  double elements = 0;
  for (const TensorSpec& t : node.tensors) {
    if (t.role != TensorRole::kParameter || !t.is_linear()) continue;
    elements += D(t.linear_in) * (t.routed ? D(node.moe.top_k) : D(t.copies));
  }
  return elements * a.activation_bytes;
}

// A mixer (MambaMixer, Mamba2Mixer, a gated delta net, a short conv): the inputs of its linear
// layers as above, plus the conv output and the scan output its backward reads (the scan
// kernels recompute their per-step states rather than keep them).
double MixerTraining(const Node& node, const Assumptions& a) {
  const double extra = D(node.mixer.conv_channels) + D(node.mixer.d_inner);
  return OpaqueTraining(node, a) + extra * a.activation_bytes;
}

double NormTraining(const Node& node, const Assumptions& a) {
  const double stats = node.norm == NormKind::kRms ? 4 : 8;  // rstd (+ mean), fp32
  return (node.saves_input ? D(node.output_width) * a.activation_bytes : 0) + stats;
}

}  // namespace

double TrainingActivationBytesPerToken(const Node& node, int64_t seq, const Assumptions& a) {
  switch (node.kind) {
    case NodeKind::kEmbedding:
    case NodeKind::kPositionEmbedding:
      return 0;  // the backward of a lookup needs only the token ids
    case NodeKind::kNorm:
      return NormTraining(node, a);
    case NodeKind::kAttention:
      return AttentionTraining(node, seq, a);
    case NodeKind::kMlp:
      return MlpTraining(node, a);
    case NodeKind::kMoe:
      return MoeTraining(node, a);
    case NodeKind::kHead:
      return D(node.input_width) * a.activation_bytes;  // the head's input
    case NodeKind::kOpaque:
      return OpaqueTraining(node, a);
    case NodeKind::kMixer:
      return MixerTraining(node, a);
  }
  return 0;
}

double BlockTrainingBytesPerToken(const BlockTemplate& block, int64_t seq, const Assumptions& a) {
  double total = 0;
  for (const Node& node : block.nodes) total += TrainingActivationBytesPerToken(node, seq, a);
  return total;
}

double InferencePeakBytesPerToken(const ModelGraph& graph, double bytes_per_activation) {
  double peak = 0;
  for (const BlockTemplate& block : graph.blocks) {
    for (const Node& node : block.nodes) {
      double transient = 0;
      if (node.kind == NodeKind::kAttention) {
        const AttentionShape& s = node.attention;
        transient = D(graph.hidden) + D(s.heads * s.head_dim) +
                    D(s.kv_heads * (s.head_dim + s.v_head_dim)) + D(s.heads * s.v_head_dim);
      } else if (node.kind == NodeKind::kMlp) {
        transient = D(graph.hidden) + D(node.mlp.intermediate) * (node.mlp.gated ? 3 : 2);
      } else if (node.kind == NodeKind::kMoe) {
        const MoeShape& m = node.moe;
        transient = D(graph.hidden) + D(m.experts) * 2 +
                    D(m.top_k) * (D(graph.hidden) + 3 * D(m.expert_intermediate)) +
                    3 * D(m.shared_intermediate);
      } else if (node.kind == NodeKind::kOpaque || node.kind == NodeKind::kMixer) {
        // Not modelled (or a mixer): the widest linear output, next to its input.
        for (const TensorSpec& t : node.tensors) {
          if (!t.is_linear()) continue;
          const double visits = t.routed ? D(node.moe.top_k) : 1;
          transient = std::max(transient, D(t.linear_in) + D(t.linear_out) * visits);
        }
      }
      peak = std::max(peak, transient);
    }
  }
  return (D(graph.hidden) + peak) * bytes_per_activation;  // + the residual stream
}

}  // namespace hubwatch
