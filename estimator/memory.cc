#include "estimator/memory.h"

#include <algorithm>
#include <cmath>

#include "estimator/activations.h"
#include "estimator/format.h"

namespace hubwatch {
namespace {

double D(uint64_t v) { return static_cast<double>(v); }
double D(int64_t v) { return static_cast<double>(v); }

// "model.layers.{i}.self_attn.q_proj.weight" -> "q_proj"
std::string ModuleName(const std::string& tensor_name) {
  const size_t end = tensor_name.rfind('.');
  const size_t begin = tensor_name.rfind('.', end - 1);
  return tensor_name.substr(begin + 1, end - begin - 1);
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
      const double n = D(t.Elements().value());
      f.params += n;
      if (t.is_linear()) {
        f.quantized_bytes += Nf4Bytes(D(t.ElementsPerCopy().value()), a) * D(t.copies);
        f.largest_linear = std::max(f.largest_linear, D(t.ElementsPerCopy().value()));
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

std::string Params(double n) { return Grouped(static_cast<uint64_t>(n)) + " params"; }
std::string PerSampleHow(int64_t batch, int64_t tokens, const std::string& unit) {
  return std::to_string(batch) + " x " + Grouped(static_cast<uint64_t>(tokens)) + " tokens x " +
         unit;
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

// Training plans share their unit layout: embed, one unit per layer, final norm + head.
MemoryPlan TrainingPlan(const Shared& s, MemoryMode mode) {
  const Assumptions& a = s.a;
  const double states =
      a.weight_bytes + a.grad_bytes + a.master_bytes + a.adam_m_bytes + a.adam_v_bytes;
  const double seq = D(s.w.seq);
  const double act = a.activation_bytes;
  const double logits_per_token = D(s.g.vocab) * a.logits_bytes;
  const double final_act = FinalActivationPerToken(s.g, s.w.seq, a) + logits_per_token;
  const double hidden_act = D(s.g.hidden) * act;

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
  double adapter_params = 0, largest_linear = 0;
  p.units.push_back({"embed", weights_of(s.embed_params, 0, s.embed_params), 0});
  for (size_t i = 0; i < s.g.layers.size(); ++i) {
    const BlockFacts& f = s.blocks[static_cast<size_t>(s.g.layers[i].block)];
    const double adapter_bytes = adapters ? f.adapter_params * a.lora_adapter_bytes : 0;
    const double per_token = a.gradient_checkpointing ? hidden_act : f.activation_per_token;
    const double adapter_per_token = adapters ? f.adapter_activation_elements * act : 0;
    p.units.push_back(
        {"block " + std::to_string(i),
         weights_of(f.params, f.quantized_bytes, f.unquantized_params) + adapter_bytes,
         seq * (per_token + adapter_per_token)});
    if (adapters) adapter_params += f.adapter_params;
    largest_linear = std::max(largest_linear, f.largest_linear);
  }
  p.units.push_back(
      {"norm + head", weights_of(s.final_params, 0, s.final_params), seq * final_act});

  const double P = D(s.params.total);
  const double b = D(s.w.batch);
  auto& c = p.components;
  if (mode == MemoryMode::kFullFinetune) {
    p.name = "full_finetune";
    p.title = "Full fine-tune (AdamW, mixed precision)";
    p.trainable_params = s.params.total;
    c.push_back({"weights", P * a.weight_bytes, Params(P) + " x " + Number(a.weight_bytes) + " B"});
    c.push_back({"gradients", P * a.grad_bytes, Params(P) + " x " + Number(a.grad_bytes) + " B"});
    c.push_back({"fp32 master weights", P * a.master_bytes,
                 Params(P) + " x " + Number(a.master_bytes) + " B"});
    c.push_back({"AdamW first moment", P * a.adam_m_bytes,
                 Params(P) + " x " + Number(a.adam_m_bytes) + " B"});
    c.push_back({"AdamW second moment", P * a.adam_v_bytes,
                 Params(P) + " x " + Number(a.adam_v_bytes) + " B"});
    if (a.state_factor != 1) {
      c.push_back(
          {"model-state overhead", P * states * (a.state_factor - 1),
           Number(states) + " B/param x " + Number(a.state_factor) + " (" + a.preset + " preset)"});
    }
  } else {
    p.trainable_params = static_cast<uint64_t>(adapter_params);
    const bool q = mode == MemoryMode::kQlora;
    p.name = q ? "qlora" : "lora";
    p.title = (q ? "QLoRA (NF4 base" : "LoRA (frozen base") + std::string(", rank ") +
              std::to_string(a.lora_rank) + " adapters)";
    if (q) {
      double quantized = 0, unquantized = s.embed_params + s.final_params;
      for (const LayerSpec& l : s.g.layers) {
        quantized += s.blocks[static_cast<size_t>(l.block)].quantized_bytes;
        unquantized += s.blocks[static_cast<size_t>(l.block)].unquantized_params;
      }
      c.push_back({"NF4 base weights + block scales", quantized,
                   "4 bits per linear weight, scale per " + std::to_string(a.qlora_block) +
                       (a.qlora_double_quant ? " (double-quantized)" : " (fp32)")});
      c.push_back({"unquantized weights", unquantized * a.lora_base_bytes,
                   Params(unquantized) + " (embeddings, norms, head) x " +
                       Number(a.lora_base_bytes) + " B"});
      p.per_card_fixed += largest_linear * a.lora_base_bytes;
      c.push_back({"dequantization buffer", largest_linear * a.lora_base_bytes,
                   "largest linear weight, dequantized"});
    } else {
      c.push_back({"frozen base weights", P * a.lora_base_bytes,
                   Params(P) + " x " + Number(a.lora_base_bytes) + " B"});
    }
    c.push_back({"adapters + grads + AdamW", adapter_params * a.lora_adapter_bytes,
                 Params(adapter_params) + " x " + Number(a.lora_adapter_bytes) + " B"});
  }
  double layers_per_token = 0;
  for (size_t i = 1; i + 1 < p.units.size(); ++i) layers_per_token += p.units[i].per_sample_bytes;
  layers_per_token /= seq;
  const double head_per_token = final_act - logits_per_token;
  c.push_back({"activations", b * seq * (layers_per_token + head_per_token),
               PerSampleHow(s.w.batch, s.w.seq,
                            Number((layers_per_token + head_per_token) / 1e6, 3) + " MB") +
                   (a.gradient_checkpointing ? " (checkpointed: block inputs only)" : "") +
                   (a.eager_attention ? " (eager attention)" : " (SDPA/flash attention)")});
  if (p.per_card_per_sample) {
    c.push_back({"recomputed block", b * p.per_card_per_sample,
                 "one block's activations during its backward"});
  }
  c.push_back({"logits", b * seq * logits_per_token,
               PerSampleHow(s.w.batch, s.w.seq,
                            Grouped(static_cast<uint64_t>(s.g.vocab)) + " x " +
                                Number(a.logits_bytes) + " B")});
  if (a.runtime_overhead_gb) {
    c.push_back({"runtime overhead", a.runtime_overhead_gb * 1e9, "CUDA context and workspaces"});
  }
  return p;
}

MemoryPlan ServePlan(const Shared& s) {
  const Assumptions& a = s.a;
  MemoryPlan p;
  p.mode = MemoryMode::kServe;
  p.name = "serve";
  p.title = "Serving (" + Number(a.serve_weight_bytes) + " B weights, " + Number(a.kv_bytes) +
            " B KV cache, " + Grouped(static_cast<uint64_t>(s.w.context)) + "-token context)";
  p.batch = s.w.batch;
  p.tokens = s.w.context;
  p.factor = a.serve_overhead_factor;
  p.usable_fraction = a.serve_utilization;
  const double prefill = D(a.prefill_tokens) * InferencePeakBytesPerToken(s.g, a.activation_bytes);
  p.per_card_fixed = a.serve_runtime_gb * 1e9 + prefill;

  p.units.push_back({"embed", s.embed_params * a.serve_weight_bytes, 0});
  for (size_t i = 0; i < s.g.layers.size(); ++i) {
    p.units.push_back(
        {"block " + std::to_string(i),
         s.blocks[static_cast<size_t>(s.g.layers[i].block)].params * a.serve_weight_bytes,
         s.kv.layer_bytes_per_sequence[i]});
  }
  p.units.push_back({"norm + head", s.final_params * a.serve_weight_bytes, 0});

  const double P = D(s.params.total);
  const double b = D(s.w.batch);
  auto& c = p.components;
  c.push_back({"weights", P * a.serve_weight_bytes,
               Params(P) + " x " + Number(a.serve_weight_bytes) + " B"});
  c.push_back({"KV cache", b * s.kv.bytes_per_sequence,
               std::to_string(s.w.batch) + " x " + Gigabytes(s.kv.bytes_per_sequence) + " per " +
                   Grouped(static_cast<uint64_t>(s.w.context)) + "-token sequence" +
                   (s.kv.sliding_layers ? " (sliding layers hold their window only)" : "")});
  if (prefill) {
    c.push_back({"prefill activations", prefill,
                 "peak of one " + Grouped(static_cast<uint64_t>(a.prefill_tokens)) +
                     "-token forward step"});
  }
  if (a.serve_runtime_gb) {
    c.push_back({"runtime overhead", a.serve_runtime_gb * 1e9, "CUDA context, graphs, non-torch"});
  }
  if (p.factor != 1) {
    const double subtotal = p.Fixed() + p.PerSample() * b;
    c.push_back({"overhead factor", subtotal * (p.factor - 1),
                 "x " + Number(p.factor) + " (" + a.preset + " preset)"});
  }
  return p;
}

}  // namespace

double MemoryPlan::Fixed() const {
  double n = per_card_fixed;
  for (const MemoryUnit& u : units) n += u.fixed_bytes;
  return n;
}

double MemoryPlan::PerSample() const {
  double n = per_card_per_sample;
  for (const MemoryUnit& u : units) n += u.per_sample_bytes;
  return n;
}

uint64_t LoraParameters(const ModelGraph& graph, const Assumptions& a) {
  uint64_t n = 0;
  for (const LayerSpec& layer : graph.layers) {
    for (const Node& node : graph.blocks[static_cast<size_t>(layer.block)].nodes) {
      for (const TensorSpec& t : node.tensors) {
        if (t.role == TensorRole::kParameter && IsLoraTarget(t, a)) {
          n += static_cast<uint64_t>(a.lora_rank * (t.linear_in + t.linear_out) * t.copies);
        }
      }
    }
  }
  return n;
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
  return {TrainingPlan(s, MemoryMode::kFullFinetune), TrainingPlan(s, MemoryMode::kLora),
          TrainingPlan(s, MemoryMode::kQlora), ServePlan(s)};
}

}  // namespace hubwatch
