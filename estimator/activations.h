#pragma once

// Activation memory derived tensor by tensor from the actual block, not from a constant.
//
// Training: what autograd keeps per token for the backward pass. Each norm keeps its input and
// fp32 statistics; attention keeps its input, q, k, v and output (SDPA/flash: plus the fp32
// log-sum-exp per head; eager: plus the softmax scores, heads x seq per token, and K/V expanded
// to every query head, and with dropout on the scores what it let through and a one-byte
// mask); a gated MLP keeps its input, gate, up, act(gate) and their product (h + 4I), a plain
// MLP its input, pre- and post-activation (h + 2I); a MoE layer its router probabilities and,
// for each of the top_k experts a token visits, the gathered input and the expert's
// intermediates (selective checkpointing keeps matmul outputs only: gate and up, no scores);
// the head keeps its input; a module that is not modelled (a graph from a checkpoint's tensors)
// the inputs of its linear layers. Dropout elsewhere is not counted (a one-byte mask per
// hidden element).
//
// Inference: the peak of one forward step: the residual stream plus the largest transient of
// any node (q, k, v and output; gate, up and product).
// Pure functions; thread-safe.

#include <cstdint>

#include "estimator/assumptions.h"
#include "estimator/model_graph.h"

namespace hubwatch {

// Bytes autograd keeps per token for one node during training at sequence length `seq`.
double TrainingActivationBytesPerToken(const Node& node, int64_t seq, const Assumptions& a);

// Bytes per token for one block (sum over its nodes).
double BlockTrainingBytesPerToken(const BlockTemplate& block, int64_t seq, const Assumptions& a);

// Peak bytes per token of one forward step at inference, over every block of the model.
double InferencePeakBytesPerToken(const ModelGraph& graph, double bytes_per_activation);

}  // namespace hubwatch
