#include "estimator/memory.h"

#include <algorithm>
#include <cmath>

#include "estimator/activations.h"

namespace hubwatch {
namespace {

double D(uint64_t v) { return static_cast<double>(v); }
double D(int64_t v) { return static_cast<double>(v); }

// "model.layers.{i}.self_attn.q_proj.weight" -> "q_proj"
// "q_proj.weight" -> "q_proj"; "experts.{e}.w1.weight" -> "w1"
std::string_view ModuleName(std::string_view tensor_name) {
  const size_t end = tensor_name.rfind('.');
  if (end == std::string_view::npos) return {};
  const size_t dot = tensor_name.rfind('.', end - 1);
  const size_t begin = dot == std::string_view::npos ? 0 : dot + 1;
  return tensor_name.substr(begin, end - begin);
}

bool IsLoraTarget(const TensorSpec& t, const Assumptions& a) {
  if (!t.is_linear()) return false;
  if (a.lora_targets.empty()) return true;
  return std::find(a.lora_targets.begin(), a.lora_targets.end(), ModuleName(t.name)) !=
         a.lora_targets.end();
}

// Per block template: the numbers the plans need, computed once.
struct BlockFacts {
  double params = 0;
  double adapter_params = 0;
  double adapter_activation_elements = 0;  // r per targeted linear per token
  double quantized_bytes = 0;              // NF4 weights + scales of its linears
  double unquantized_params = 0;           // norms, biases, routers that are not Linear
  double largest_linear = 0;
  double activation_per_token = 0;
};

double Nf4Bytes(double elements, const Assumptions& a) {
  const double blocks = std::ceil(elements / D(a.qlora_block));
  const double scales =
      a.qlora_double_quant ? blocks + std::ceil(blocks / 256) * 4 + 4 : blocks * 4;
  return elements / 2 + scales;
}

BlockFacts Facts(const BlockTemplate& block, int64_t seq, const Assumptions& a) {
  BlockFacts f;
  for (const Node& node : block.nodes) {
    for (const TensorSpec& t : node.tensors) {
      if (t.role != TensorRole::kParameter) continue;
      const double n = D(t.Parameters().value());
      f.params += n;
      if (t.is_linear()) {
        f.quantized_bytes += Nf4Bytes(D(t.ParametersPerCopy().value()), a) * D(t.copies);
        f.largest_linear = std::max(f.largest_linear, D(t.ParametersPerCopy().value()));
      } else {
        f.unquantized_params += n;
      }
      if (IsLoraTarget(t, a)) {
        f.adapter_params += D(a.lora_rank) * D(t.linear_in + t.linear_out) * D(t.copies);
        const double visits = t.routed ? D(node.moe.top_k) : 1;  // experts a token visits
        f.adapter_activation_elements += D(a.lora_rank) * visits;
      }
    }
  }
  f.activation_per_token = BlockTrainingBytesPerToken(block, seq, a);
  return f;
}

double NodesParams(const std::vector<Node>& nodes) {
  double n = 0;
  for (const Node& node : nodes) n += D(NodeParams(node).value());
  return n;
}

double FinalActivationPerToken(const ModelGraph& g, int64_t seq, const Assumptions& a) {
  double bytes = 0;
  for (const Node& node : g.final_nodes) bytes += TrainingActivationBytesPerToken(node, seq, a);
  return bytes;
}

struct Shared {
  const ModelGraph& g;
  const ParamCounts& params;
  const KvCache& kv;
  const Workload& w;
  const Assumptions& a;
  std::vector<BlockFacts> blocks;
  double embed_params;
  double final_params;
  double max_block_activation = 0;
};

void Finish(MemoryPlan& p) {
  p.cumulative_fixed.assign(1, 0.0);
  p.cumulative_per_sample.assign(1, 0.0);
  p.cumulative_fixed.reserve(p.units.size() + 1);
  p.cumulative_per_sample.reserve(p.units.size() + 1);
  for (const MemoryUnit& u : p.units) {
    p.cumulative_fixed.push_back(p.cumulative_fixed.back() + u.fixed_bytes);
    p.cumulative_per_sample.push_back(p.cumulative_per_sample.back() + u.per_sample_bytes);
  }
  p.fixed_bytes = p.per_card_fixed + p.cumulative_fixed.back();
  p.per_sample_bytes = p.per_card_per_sample + p.cumulative_per_sample.back();
}

// Training plans share their unit layout: embed, one unit per layer, final norm + head.
MemoryPlan TrainingPlan(const Shared& s, MemoryMode mode) {
  const Assumptions& a = s.a;
  const double states =
      a.weight_bytes + a.grad_bytes + a.master_bytes + a.adam_m_bytes + a.adam_v_bytes;
  const double seq = D(s.w.seq);
  const double logits_per_token = s.g.vocab_logits ? D(s.g.vocab) * a.logits_bytes : 0;
  const double final_act = FinalActivationPerToken(s.g, s.w.seq, a) + logits_per_token;

  MemoryPlan p;
  p.mode = mode;
  p.batch = s.w.batch;
  p.tokens = s.w.seq;
  p.per_card_fixed = a.runtime_overhead_gb * 1e9;
  if (a.gradient_checkpointing) p.per_card_per_sample = seq * s.max_block_activation;

  auto weights_of = [&](double params, double quantized, double unquantized) {
    switch (mode) {
      case MemoryMode::kFullFinetune:
        return params * states * a.state_factor;
      case MemoryMode::kQlora:
        return quantized + unquantized * a.lora_base_bytes;
      default:
        return params * a.lora_base_bytes;
    }
  };
  const bool adapters = mode != MemoryMode::kFullFinetune;
  double adapter_params = 0, largest_linear = 0, quantized = 0;
  double unquantized = s.embed_params + s.final_params;
  p.units.reserve(s.g.layers.size() + 2);
  p.units.push_back({weights_of(s.embed_params, 0, s.embed_params), 0});
  for (const LayerSpec& layer : s.g.layers) {
    const BlockFacts& f = s.blocks[static_cast<size_t>(layer.block)];
    const double adapter_bytes = adapters ? f.adapter_params * a.lora_adapter_bytes : 0;
    const double per_token =
        a.gradient_checkpointing ? D(s.g.hidden) * a.activation_bytes : f.activation_per_token;
    const double adapter_per_token =
        adapters ? f.adapter_activation_elements * a.activation_bytes : 0;
    p.units.push_back(
        {weights_of(f.params, f.quantized_bytes, f.unquantized_params) + adapter_bytes,
         seq * (per_token + adapter_per_token)});
    if (adapters) adapter_params += f.adapter_params;
    largest_linear = std::max(largest_linear, f.largest_linear);
    quantized += f.quantized_bytes;
    unquantized += f.unquantized_params;
  }
  p.units.push_back({weights_of(s.final_params, 0, s.final_params), seq * final_act});
  if (s.g.tied) p.tied_head_bytes = weights_of(s.embed_params, 0, s.embed_params);

  const double P = D(s.params.total);
  const double b = D(s.w.batch);
  auto& c = p.components;
  if (mode == MemoryMode::kFullFinetune) {
    p.trainable_params = s.params.total;
    c.push_back({MemoryItem::kWeights, P * a.weight_bytes});
    c.push_back({MemoryItem::kGradients, P * a.grad_bytes});
    c.push_back({MemoryItem::kMasterWeights, P * a.master_bytes});
    c.push_back({MemoryItem::kAdamFirstMoment, P * a.adam_m_bytes});
    c.push_back({MemoryItem::kAdamSecondMoment, P * a.adam_v_bytes});
    if (a.state_factor != 1) {
      c.push_back({MemoryItem::kStateOverhead, P * states * (a.state_factor - 1)});
    }
  } else {
    p.trainable_params = static_cast<uint64_t>(adapter_params);
    if (mode == MemoryMode::kQlora) {
      c.push_back({MemoryItem::kNf4Base, quantized});
      c.push_back({MemoryItem::kUnquantized, unquantized * a.lora_base_bytes});
      p.per_card_fixed += largest_linear * a.lora_base_bytes;
      c.push_back({MemoryItem::kDequantBuffer, largest_linear * a.lora_base_bytes});
    } else {
      c.push_back({MemoryItem::kFrozenBase, P * a.lora_base_bytes});
    }
    c.push_back({MemoryItem::kAdapters, adapter_params * a.lora_adapter_bytes});
  }
  double layers = 0;
  for (size_t i = 1; i + 1 < p.units.size(); ++i) layers += p.units[i].per_sample_bytes;
  c.push_back({MemoryItem::kActivations, b * (layers + seq * (final_act - logits_per_token))});
  if (p.per_card_per_sample) {
    c.push_back({MemoryItem::kRecomputedBlock, b * p.per_card_per_sample});
  }
  c.push_back({MemoryItem::kLogits, b * seq * logits_per_token});
  if (a.runtime_overhead_gb) c.push_back({MemoryItem::kRuntime, a.runtime_overhead_gb * 1e9});
  Finish(p);
  return p;
}

MemoryPlan ServePlan(const Shared& s) {
  const Assumptions& a = s.a;
  MemoryPlan p;
  p.mode = MemoryMode::kServe;
  p.batch = s.w.ServingBatch();
  p.tokens = s.w.context;
  p.factor = a.serve_overhead_factor;
  p.usable_fraction = a.serve_utilization;
  const double peak_per_token = InferencePeakBytesPerToken(s.g, a.activation_bytes);
  // A decoder's prefill runs in steps of prefill_tokens, once per card at a time; an encoder's
  // forward pass holds a whole input per sequence of the batch.
  const double prefill = s.g.decodes ? D(a.prefill_tokens) * peak_per_token : 0;
  p.per_card_fixed = a.serve_runtime_gb * 1e9 + prefill;
  if (!s.g.decodes) p.per_card_per_sample = D(s.w.context) * peak_per_token;

  p.units.reserve(s.g.layers.size() + 2);
  p.units.push_back({s.embed_params * a.serve_weight_bytes, 0});
  for (size_t i = 0; i < s.g.layers.size(); ++i) {
    p.units.push_back(
        {s.blocks[static_cast<size_t>(s.g.layers[i].block)].params * a.serve_weight_bytes,
         s.kv.layer_bytes_per_sequence[i]});
  }
  p.units.push_back({s.final_params * a.serve_weight_bytes, 0});
  if (s.g.tied) p.tied_head_bytes = s.embed_params * a.serve_weight_bytes;
  Finish(p);

  const double b = D(p.batch);
  auto& c = p.components;
  c.push_back({MemoryItem::kWeights, D(s.params.total) * a.serve_weight_bytes});
  if (s.g.decodes || s.kv.bytes_per_sequence) {
    c.push_back({MemoryItem::kKvCache, b * s.kv.bytes_per_sequence});
  }
  if (prefill) c.push_back({MemoryItem::kPrefill, prefill});
  if (p.per_card_per_sample) c.push_back({MemoryItem::kPrefill, b * p.per_card_per_sample});
  if (a.serve_runtime_gb) c.push_back({MemoryItem::kRuntime, a.serve_runtime_gb * 1e9});
  if (p.factor != 1) {
    c.push_back({MemoryItem::kOverheadFactor, (p.Fixed() + p.PerSample() * b) * (p.factor - 1)});
  }
  return p;
}

}  // namespace

std::string_view ModeName(MemoryMode mode) {
  switch (mode) {
    case MemoryMode::kFullFinetune:
      return "full_finetune";
    case MemoryMode::kLora:
      return "lora";
    case MemoryMode::kQlora:
      return "qlora";
    case MemoryMode::kServe:
      return "serve";
  }
  return "";
}

std::string_view ItemName(MemoryItem item) {
  switch (item) {
    case MemoryItem::kWeights:
      return "weights";
    case MemoryItem::kGradients:
      return "gradients";
    case MemoryItem::kMasterWeights:
      return "fp32 master weights";
    case MemoryItem::kAdamFirstMoment:
      return "AdamW first moment";
    case MemoryItem::kAdamSecondMoment:
      return "AdamW second moment";
    case MemoryItem::kStateOverhead:
      return "model-state overhead";
    case MemoryItem::kFrozenBase:
      return "frozen base weights";
    case MemoryItem::kNf4Base:
      return "NF4 base weights + block scales";
    case MemoryItem::kUnquantized:
      return "unquantized weights";
    case MemoryItem::kDequantBuffer:
      return "dequantization buffer";
    case MemoryItem::kAdapters:
      return "adapters + grads + AdamW";
    case MemoryItem::kActivations:
      return "activations";
    case MemoryItem::kRecomputedBlock:
      return "recomputed block";
    case MemoryItem::kLogits:
      return "logits";
    case MemoryItem::kRuntime:
      return "runtime overhead";
    case MemoryItem::kKvCache:
      return "KV cache";
    case MemoryItem::kPrefill:
      return "prefill activations";
    case MemoryItem::kOverheadFactor:
      return "overhead factor";
  }
  return "";
}

double MemoryPlan::Bytes(MemoryItem item) const {
  for (const MemoryComponent& c : components) {
    if (c.item == item) return c.bytes;
  }
  return 0;
}

Count LoraParameters(const ModelGraph& graph, const Assumptions& a) {
  auto count = [](int64_t v) {
    return v < 0 ? Count::Poisoned() : Count(static_cast<uint64_t>(v));
  };
  const std::vector<uint64_t> uses = BlockUses(graph);
  Count n = 0;
  for (size_t b = 0; b < graph.blocks.size(); ++b) {
    for (const Node& node : graph.blocks[b].nodes) {
      for (const TensorSpec& t : node.tensors) {
        if (t.role == TensorRole::kParameter && IsLoraTarget(t, a)) {
          n += Count(uses[b]) * count(a.lora_rank) * (count(t.linear_in) + count(t.linear_out)) *
               count(t.copies);
        }
      }
    }
  }
  return n;
}

std::vector<std::string> LoraTargetModules(const ModelGraph& graph) {
  std::vector<std::string> names;
  for (const BlockTemplate& block : graph.blocks) {
    for (const Node& node : block.nodes) {
      for (const TensorSpec& t : node.tensors) {
        if (t.role != TensorRole::kParameter || !t.is_linear()) continue;
        const std::string name(ModuleName(t.name));
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
  }
  return names;
}

std::vector<MemoryPlan> PlanMemory(const ModelGraph& graph, const ParamCounts& params,
                                   const KvCache& kv, const Workload& workload,
                                   const Assumptions& a) {
  Shared s{graph,
           params,
           kv,
           workload,
           a,
           {},
           NodesParams(graph.embeddings),
           NodesParams(graph.final_nodes)};
  for (const BlockTemplate& block : graph.blocks) {
    s.blocks.push_back(Facts(block, workload.seq, a));
    s.max_block_activation = std::max(s.max_block_activation, s.blocks.back().activation_per_token);
  }
  std::vector<MemoryPlan> plans;
  plans.reserve(4);
  plans.push_back(TrainingPlan(s, MemoryMode::kFullFinetune));
  plans.push_back(TrainingPlan(s, MemoryMode::kLora));
  plans.push_back(TrainingPlan(s, MemoryMode::kQlora));
  plans.push_back(ServePlan(s));
  return plans;
}

}  // namespace hubwatch
