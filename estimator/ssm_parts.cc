#include "estimator/ssm_parts.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "estimator/graph_builder.h"

namespace hubwatch::ssm {

using namespace build;  // NOLINT: internal helpers

namespace {

constexpr int64_t kMaxConvKernel = 1024;
constexpr int64_t kMaxExpand = 64;

// A positive integer, or the string "auto" (Mamba's time_step_rank, Bamba's mamba_d_head):
// then `auto_value`.
int64_t PositiveOrAuto(ConfigReader& config, Keys keys, int64_t max, int64_t auto_value,
                       int64_t fallback, std::string_view fallback_why) {
  const nlohmann::json* v = config.Find(keys);
  if (v && v->is_string() && v->get<std::string>() == "auto") return auto_value;
  return config.Positive(keys, max, fallback, fallback_why);
}

// d_inner: a Mamba config's intermediate_size (which transformers' kwargs set over expand x
// hidden), else expand x hidden; a hybrid's mamba_d_ssm (Falcon-H1), else mamba_expand x hidden.
int64_t ReadInner(ConfigReader& config, int64_t hidden, MambaKeys keys) {
  const bool m = keys == MambaKeys::kMamba;
  if (std::optional<int64_t> inner =
          config.OptionalPositive({m ? "intermediate_size" : "mamba_d_ssm"}, kMaxWidth)) {
    return *inner;
  }
  const int64_t expand = config.Positive({m ? "expand" : "mamba_expand"}, kMaxExpand, 2,
                                         "expand absent: Mamba's default 2");
  const int64_t inner = expand * hidden;
  if (inner > kMaxWidth)
    config.Fail("expand x hidden_size (" + std::to_string(inner) + ") is too large");
  return inner;
}

// Each value under one name only: a hybrid's attention has a head_dim of its own, so its
// mixer's is read as mamba_d_head alone.
void ReadCommon(ConfigReader& config, MambaKeys keys, MambaDims& d, int64_t default_state) {
  const bool m = keys == MambaKeys::kMamba;
  d.d_state = config.Positive({m ? "state_size" : "mamba_d_state"}, kMaxWidth, default_state,
                              "state_size absent: the architecture's default");
  d.conv_kernel = config.Positive({m ? "conv_kernel" : "mamba_d_conv"}, kMaxConvKernel, 4,
                                  "conv_kernel absent: default 4");
  d.conv_bias = config.Flag({m ? "use_conv_bias" : "mamba_conv_bias"}, true);
  d.proj_bias = d.out_proj_bias = config.Flag({m ? "use_bias" : "mamba_proj_bias"}, false);
}

// A mixer's shape; the state it keeps is the conv's last `kernel` inputs over `conv_channels`
// (as transformers' caches hold them) plus `recurrent` elements of SSM / delta-net state.
MixerShape Shape(MixerKind kind, int64_t d_inner, int64_t d_state, int64_t n_groups, int64_t heads,
                 int64_t kernel, int64_t conv_channels, int64_t recurrent) {
  MixerShape s;
  s.kind = kind;
  s.d_inner = d_inner;
  s.d_state = d_state;
  s.n_groups = n_groups;
  s.heads = heads;
  s.conv_kernel = kernel;
  s.conv_channels = conv_channels;
  s.state_elements = conv_channels * kernel + recurrent;
  return s;
}

Node MixerNode(const std::string& module, int64_t hidden, const MixerShape& shape,
               std::string label) {
  Node n;
  n.kind = NodeKind::kMixer;
  n.module = module;
  n.output_width = hidden;
  n.mixer = shape;
  n.label = std::move(label);
  return n;
}

void AddConv(Node& n, const std::string& name, int64_t channels, int64_t kernel, bool bias) {
  AddTensor(n, name + ".weight", {channels, 1, kernel});
  if (bias) AddTensor(n, name + ".bias", {channels});
}

}  // namespace

MambaDims ReadMamba1(ConfigReader& config, int64_t hidden, MambaKeys keys) {
  const bool m = keys == MambaKeys::kMamba;
  MambaDims d;
  d.hidden = hidden;
  d.d_inner = ReadInner(config, hidden, keys);
  ReadCommon(config, keys, d, 16);
  d.dt_rank = PositiveOrAuto(config, {m ? "time_step_rank" : "mamba_dt_rank"}, kMaxWidth,
                             (hidden + 15) / 16, (hidden + 15) / 16,
                             "time_step_rank absent: \"auto\", ceil(hidden_size / 16)");
  return d;
}

MambaDims ReadMamba2(ConfigReader& config, int64_t hidden, MambaKeys keys) {
  const bool m = keys == MambaKeys::kMamba;
  MambaDims d;
  d.hidden = hidden;
  d.d_inner = ReadInner(config, hidden, keys);
  ReadCommon(config, keys, d, 128);
  d.heads = config.Positive({m ? "num_heads" : "mamba_n_heads"}, kMaxHeads, 128,
                            "num_heads absent: Mamba-2's default 128");
  // Absent: Mamba2Config's 64; the hybrids' "auto", the inner width over the heads.
  const int64_t per_head = d.d_inner / std::max<int64_t>(d.heads, 1);
  d.head_dim = PositiveOrAuto(config, {m ? "head_dim" : "mamba_d_head"}, kMaxWidth, per_head,
                              m ? 64 : per_head, "head_dim absent: the architecture's default");
  d.n_groups = config.Positive({m ? "n_groups" : "mamba_n_groups"}, kMaxHeads, 1,
                               "n_groups absent: one group");
  if (d.heads * d.head_dim != d.d_inner) {
    config.Fail("Mamba-2 heads x head_dim (" + std::to_string(d.heads) + " x " +
                std::to_string(d.head_dim) + ") must equal the inner width " +
                std::to_string(d.d_inner));
  } else if (d.heads % d.n_groups != 0) {
    config.Fail("Mamba-2 n_groups (" + std::to_string(d.n_groups) + ") must divide num_heads (" +
                std::to_string(d.heads) + ")");
  }
  return d;
}

Node Mamba1Mixer(const std::string& module, const MambaDims& d, bool bcdt_norms) {
  const MixerShape s = Shape(MixerKind::kMamba1, d.d_inner, d.d_state, 0, 0, d.conv_kernel,
                             d.d_inner, d.d_inner * d.d_state);
  Node n = MixerNode(module, d.hidden, s,
                     "Mamba selective scan: inner " + std::to_string(d.d_inner) + ", state " +
                         std::to_string(d.d_state) + ", conv " + std::to_string(d.conv_kernel) +
                         ", dt rank " + std::to_string(d.dt_rank));
  AddLinear(n, "in_proj", d.hidden, 2 * d.d_inner, d.proj_bias);  // x and the gate z
  AddConv(n, "conv1d", d.d_inner, d.conv_kernel, d.conv_bias);
  AddLinear(n, "x_proj", d.d_inner, d.dt_rank + 2 * d.d_state, false);  // dt, B, C
  AddLinear(n, "dt_proj", d.dt_rank, d.d_inner, true);
  AddTensor(n, "A_log", {d.d_inner, d.d_state});
  AddTensor(n, "D", {d.d_inner});
  AddLinear(n, "out_proj", d.d_inner, d.hidden, d.out_proj_bias);
  if (bcdt_norms) {
    AddTensor(n, "dt_layernorm.weight", {d.dt_rank});
    AddTensor(n, "b_layernorm.weight", {d.d_state});
    AddTensor(n, "c_layernorm.weight", {d.d_state});
  }
  return n;
}

Node Mamba2Mixer(const std::string& module, const MambaDims& d) {
  const int64_t conv_dim = d.d_inner + 2 * d.n_groups * d.d_state;  // x, B, C
  const MixerShape s = Shape(MixerKind::kMamba2, d.d_inner, d.d_state, d.n_groups, d.heads,
                             d.conv_kernel, conv_dim, d.heads * d.head_dim * d.d_state);
  Node n = MixerNode(module, d.hidden, s,
                     "Mamba-2 SSD: " + std::to_string(d.heads) + " heads of " +
                         std::to_string(d.head_dim) + ", state " + std::to_string(d.d_state) +
                         ", " + std::to_string(d.n_groups) + " B/C groups, conv " +
                         std::to_string(d.conv_kernel));
  AddLinear(n, "in_proj", d.hidden, d.d_inner + conv_dim + d.heads, d.proj_bias);  // z, xBC, dt
  AddConv(n, "conv1d", conv_dim, d.conv_kernel, d.conv_bias);
  AddTensor(n, "dt_bias", {d.heads});
  AddTensor(n, "A_log", {d.heads});
  AddTensor(n, "D", {d.heads});
  if (d.gated_norm) AddTensor(n, "norm.weight", {d.d_inner});  // MambaRMSNormGated
  AddLinear(n, "out_proj", d.d_inner, d.hidden, d.out_proj_bias);
  return n;
}

Node GatedDeltaNet(const std::string& module, const DeltaNetDims& d) {
  const int64_t keys = d.key_heads * d.key_dim;
  const int64_t values = d.value_heads * d.value_dim;
  const int64_t conv_dim = 2 * keys + values;  // q, k, v
  // The state: the conv's last inputs and a key x value matrix per value head.
  const MixerShape s =
      Shape(MixerKind::kGatedDeltaNet, values, d.key_dim, d.key_heads, d.value_heads, d.conv_kernel,
            conv_dim, d.value_heads * d.key_dim * d.value_dim);
  Node n = MixerNode(module, d.hidden, s,
                     "Gated DeltaNet (linear attention): " + std::to_string(d.key_heads) +
                         " key heads of " + std::to_string(d.key_dim) + ", " +
                         std::to_string(d.value_heads) + " value heads of " +
                         std::to_string(d.value_dim) + ", conv " + std::to_string(d.conv_kernel));
  if (d.split_projections) {
    AddLinear(n, "in_proj_qkv", d.hidden, conv_dim, false);
    AddLinear(n, "in_proj_z", d.hidden, values, false);
    AddLinear(n, "in_proj_b", d.hidden, d.value_heads, false);
    AddLinear(n, "in_proj_a", d.hidden, d.value_heads, false);
  } else {
    AddLinear(n, "in_proj_qkvz", d.hidden, 2 * keys + 2 * values, false);
    AddLinear(n, "in_proj_ba", d.hidden, 2 * d.value_heads, false);  // beta and the decay gate
  }
  AddConv(n, "conv1d", conv_dim, d.conv_kernel, false);
  AddTensor(n, "dt_bias", {d.value_heads});
  AddTensor(n, "A_log", {d.value_heads});
  AddTensor(n, "norm.weight", {d.value_dim});  // gated RMSNorm shared by the value heads
  AddLinear(n, "out_proj", values, d.hidden, false);
  return n;
}

Node ShortConv(const std::string& module, int64_t hidden, int64_t kernel, bool bias) {
  const MixerShape s = Shape(MixerKind::kShortConv, hidden, 0, 0, 0, kernel, hidden, 0);
  Node n =
      MixerNode(module, hidden, s, "gated short convolution, kernel " + std::to_string(kernel));
  AddLinear(n, "in_proj", hidden, 3 * hidden, bias);  // B, C, x
  AddConv(n, "conv", hidden, kernel, bias);
  AddLinear(n, "out_proj", hidden, hidden, bias);
  return n;
}

Node HybridAttention(const std::string& module, const AttentionDims& d, const char* o_name,
                     bool gated_q, const char* q_norm, const char* k_norm) {
  AttentionShape shape;
  shape.kind = KindFromHeads(d.heads, d.kv_heads);
  shape.heads = d.heads;
  shape.kv_heads = d.kv_heads;
  shape.head_dim = shape.v_head_dim = d.head_dim;
  if (q_norm) shape.qk_norm_width = (d.heads + d.kv_heads) * d.head_dim;
  Node n = AttentionNode(module, shape);
  n.output_width = d.hidden;
  AddLinear(n, "q_proj", d.hidden, d.heads * d.head_dim * (gated_q ? 2 : 1), d.bias);
  AddLinear(n, "k_proj", d.hidden, d.kv_heads * d.head_dim, d.bias);
  AddLinear(n, "v_proj", d.hidden, d.kv_heads * d.head_dim, d.bias);
  AddLinear(n, o_name, d.heads * d.head_dim, d.hidden, d.bias);
  if (q_norm) {
    AddTensor(n, std::string(q_norm) + ".weight", {d.head_dim});
    AddTensor(n, std::string(k_norm) + ".weight", {d.head_dim});
  }
  if (gated_q) n.label += ", sigmoid output gate";
  return n;
}

AttentionDims ReadAttention(ConfigReader& config, int64_t hidden) {
  AttentionDims d;
  d.hidden = hidden;
  d.heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  d.kv_heads = config.Positive({"num_key_value_heads"}, kMaxHeads, d.heads,
                               "num_key_value_heads absent: one KV head per query head (MHA)");
  d.head_dim = ReadHeadDim(config, hidden, d.heads, std::nullopt);
  if (d.heads % d.kv_heads != 0) {
    config.Fail("num_attention_heads (" + std::to_string(d.heads) +
                ") is not a multiple of num_key_value_heads (" + std::to_string(d.kv_heads) + ")");
  }
  return d;
}

Node GatedMlp(const std::string& module, int64_t hidden, int64_t intermediate,
              const std::string& activation, const char* gate, const char* up, const char* down,
              bool bias) {
  Node n = MlpNode(module, hidden, {intermediate, true, activation});
  AddLinear(n, gate, hidden, intermediate, bias);
  AddLinear(n, up, hidden, intermediate, bias);
  AddLinear(n, down, intermediate, hidden, bias);
  return n;
}

}  // namespace hubwatch::ssm
