#pragma once

// The sequence mixers of state-space and hybrid models (kMixer nodes, model_graph.h), each under
// the tensor names and shapes of the transformers module it mirrors, with the fixed state it
// keeps per sequence. Shared by arch_ssm.cc (mamba, mamba2, falcon_mamba), arch_ssm_hybrid.cc
// (jamba, bamba, lfm2) and arch_ssm_qwen.cc (qwen3_next). Internal to the estimator; problems
// are reported through config.Fail / config.Note.

#include <cstdint>
#include <string>

#include "estimator/config_reader.h"
#include "estimator/model_graph.h"

namespace hubwatch::ssm {

// The widths of a Mamba-1 or Mamba-2 mixer.
struct MambaDims {
  int64_t hidden = 0;
  int64_t d_inner = 0;  // expand x hidden
  int64_t d_state = 0;
  int64_t conv_kernel = 0;
  int64_t dt_rank = 0;   // mamba1: the rank of the dt projection
  int64_t heads = 0;     // mamba2
  int64_t head_dim = 0;  // mamba2: heads x head_dim = d_inner
  int64_t n_groups = 0;  // mamba2: groups sharing B and C
  bool conv_bias = true;
  bool proj_bias = false;      // in_proj (and out_proj unless out_proj_bias says otherwise)
  bool out_proj_bias = false;  // Falcon-H1: projectors_bias
  bool gated_norm = true;      // mamba2: the gated RMSNorm before out_proj (Falcon-H1: optional)
};

// How a config names the mixer's widths: a Mamba config's own keys (state_size, conv_kernel,
// time_step_rank, expand, num_heads ...; d_inner from intermediate_size) or a hybrid's
// "mamba_"-prefixed ones (mamba_d_state, mamba_d_conv ...; d_inner = mamba_d_ssm, else
// mamba_expand x hidden, as the hybrid's intermediate_size is its MLP's).
enum class MambaKeys { kMamba, kHybrid };

MambaDims ReadMamba1(ConfigReader& config, int64_t hidden, MambaKeys keys);
MambaDims ReadMamba2(ConfigReader& config, int64_t hidden, MambaKeys keys);

// MambaMixer (mamba, falcon_mamba) / JambaMambaMixer: in_proj, conv1d, x_proj, dt_proj, A_log,
// D, out_proj; `bcdt_norms` adds Jamba's dt/b/c_layernorm weights (FalconMamba's are weightless).
Node Mamba1Mixer(const std::string& module, const MambaDims& d, bool bcdt_norms);
// Mamba2Mixer / BambaMixer: in_proj (z, x, B, C, dt), conv1d over x/B/C, dt_bias, A_log, D, a
// gated RMSNorm, out_proj.
Node Mamba2Mixer(const std::string& module, const MambaDims& d);

// Qwen3NextGatedDeltaNet: in_proj_qkvz, in_proj_ba, conv1d over q/k/v, dt_bias, A_log, a gated
// RMSNorm per value head, out_proj; the state is a key x value matrix per value head.
struct DeltaNetDims {
  int64_t hidden, key_heads, value_heads, key_dim, value_dim, conv_kernel;
  // Qwen3.5's layout of the same weights: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a.
  bool split_projections = false;
};
Node GatedDeltaNet(const std::string& module, const DeltaNetDims& d);

// Lfm2ShortConv: in_proj (B, C, x), a depthwise causal conv of `kernel`, out_proj; its state is
// the conv's last `kernel` inputs.
Node ShortConv(const std::string& module, int64_t hidden, int64_t kernel, bool bias);

// The softmax attention of a hybrid's attention layers: q/k/v/o without biases, caching K and V
// as usual. `o_name`: "o_proj" (LFM2: "out_proj"); `gated_q`: q_proj also emits a per-head
// output gate (Qwen3-Next); q_norm/k_norm: the names of per-head RMSNorms [head_dim], or null.
struct AttentionDims {
  int64_t hidden, heads, kv_heads, head_dim;
  bool bias = false;  // on q, k, v and o (granitemoehybrid's attention_bias)
};
AttentionDims ReadAttention(ConfigReader& config, int64_t hidden);
Node HybridAttention(const std::string& module, const AttentionDims& d, const char* o_name,
                     bool gated_q, const char* q_norm, const char* k_norm);

// A gated MLP act(gate(x)) * up(x) -> down under the given projection names.
Node GatedMlp(const std::string& module, int64_t hidden, int64_t intermediate,
              const std::string& activation, const char* gate, const char* up, const char* down,
              bool bias = false);

}  // namespace hubwatch::ssm
