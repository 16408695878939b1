#include "estimator/plan_facts.h"

#include <algorithm>

#include "estimator/activations.h"
#include "estimator/quantization.h"

namespace hubwatch {
namespace {

double D(uint64_t v) { return static_cast<double>(v); }
double D(int64_t v) { return static_cast<double>(v); }

}  // namespace

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

double FinalActivationPerToken(const ModelGraph& g, int64_t seq, const Assumptions& a) {
  double bytes = 0;
  for (const Node& node : g.final_nodes) bytes += TrainingActivationBytesPerToken(node, seq, a);
  return bytes;
}

namespace {

BlockFacts Facts(const BlockTemplate& block, int64_t seq, const Assumptions& a) {
  BlockFacts f;
  for (const Node& node : block.nodes) {
    for (const TensorSpec& t : node.tensors) {
      if (t.role != TensorRole::kParameter) continue;
      const double n = D(t.Parameters().value());
      const double per_copy = D(t.ParametersPerCopy().value());
      f.params += n;
      f.largest_tensor = std::max(f.largest_tensor, per_copy);
      if (t.is_linear()) {
        f.qlora_linear_bytes += QuantizedLinearBytes(t, a.qlora_quantization, a.lora_base_bytes, a);
        f.serve_bytes += QuantizedLinearBytes(t, a.serve_quantization, a.serve_weight_bytes, a);
        f.largest_linear = std::max(f.largest_linear, per_copy);
      } else {
        f.unquantized_params += n;
        f.serve_bytes += n * a.serve_weight_bytes;
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

double LargestTensor(const std::vector<Node>& nodes) {
  double n = 0;
  for (const Node& node : nodes) {
    for (const TensorSpec& t : node.tensors) {
      if (t.role == TensorRole::kParameter) n = std::max(n, D(t.ParametersPerCopy().value()));
    }
  }
  return n;
}

}  // namespace

void FinishPlan(MemoryPlan& p) {
  p.cumulative_fixed.assign(1, 0.0);
  p.cumulative_per_sample.assign(1, 0.0);
  p.cumulative_step.assign(1, 0.0);
  for (const MemoryUnit& u : p.units) {
    p.cumulative_fixed.push_back(p.cumulative_fixed.back() + u.fixed_bytes);
    p.cumulative_per_sample.push_back(p.cumulative_per_sample.back() + u.per_sample_bytes);
    p.cumulative_step.push_back(p.cumulative_step.back() + u.step_bytes);
  }
  p.fixed_bytes = p.per_card_fixed + p.cumulative_fixed.back();
  p.per_sample_bytes = p.per_card_per_sample + p.cumulative_per_sample.back();
  p.step_bytes = p.per_card_step + p.cumulative_step.back();
  p.peaks_at_step = p.PeaksAtStep(p.batch);
}

PlanFacts CollectPlanFacts(const ModelGraph& graph, const ParamCounts& params, const KvCache& kv,
                           const Workload& workload, const Assumptions& a) {
  PlanFacts s{graph,
              params,
              kv,
              workload,
              a,
              {},
              NodesParams(graph.embeddings),
              NodesParams(graph.final_nodes)};
  s.largest_tensor = std::max(LargestTensor(graph.embeddings), LargestTensor(graph.final_nodes));
  for (const BlockTemplate& block : graph.blocks) {
    s.blocks.push_back(Facts(block, workload.seq, a));
    const BlockFacts& f = s.blocks.back();
    s.max_block_activation = std::max(s.max_block_activation, f.activation_per_token);
    s.largest_tensor = std::max(s.largest_tensor, f.largest_tensor);
    s.largest_block_params = std::max(s.largest_block_params, f.params);
  }
  return s;
}

}  // namespace hubwatch
