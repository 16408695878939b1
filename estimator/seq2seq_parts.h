#pragma once

// The parts every encoder-decoder builder (arch_seq2seq.cc, arch_seq2seq_bart.cc) shares: the
// attention shapes of the three kinds of attention an encoder-decoder holds, and the join of an
// encoder part and a decoder part into one graph of two sections. Internal to the estimator.

#include <cstdint>
#include <string>

#include "estimator/arch_registry.h"
#include "estimator/model_graph.h"

namespace hubwatch::seq2seq {

// Multi-head attention of `heads` x `head_dim`, caching as `caching` says: encoder self-attention
// kNone (it reads the whole input once), decoder self-attention kSelf, cross-attention kCross
// over `cross_tokens` encoder positions (K and V of the encoder output, once per sequence).
AttentionShape Attention(int64_t heads, int64_t head_dim, KvCaching caching,
                         int64_t cross_tokens = 0);

// Fills `g` with `encoder` and `decoder` as the sections "encoder" and "decoder" (in that order:
// embeddings, layers and final nodes of the encoder first), and marks it a model that decodes
// token by token and computes vocabulary logits. The caller sets vocab, hidden, tied, family.
void Join(ModelGraph& g, ModelGraph encoder, std::string encoder_label, ModelGraph decoder,
          std::string decoder_label);

// A node holding one tensor `name` of `shape` under `module`.
Node TensorNode(NodeKind kind, const std::string& module, const std::string& name,
                TensorShape shape, int64_t width, std::string label);

// bart, marian, whisper (arch_seq2seq_bart.cc).
void RegisterBartFamily(ArchRegistry& registry);

}  // namespace hubwatch::seq2seq
