#include <nlohmann/json.hpp>

#include "estimator/explain.h"
#include "estimator/report.h"

namespace hubwatch {
namespace {

nlohmann::json StructureJson(const ModelGraph& g, int64_t seq) {
  size_t listed = 0;  // of kMaxListedTensors
  auto node_json = [&](const Node& n) {
    nlohmann::json tensors = nlohmann::json::array();
    const bool list = listed + n.tensors.size() <= kMaxListedTensors;
    for (const TensorSpec& t : n.tensors) {
      if (!list) break;
      nlohmann::json j = {{"name", TensorName(n, t)}, {"shape", t.shape.ToVector()}};
      if (t.role != TensorRole::kParameter) {
        j["role"] = t.role == TensorRole::kBuffer     ? "buffer"
                    : t.role == TensorRole::kTiedCopy ? "tied_copy"
                                                      : "extra_on_disk";
      }
      if (!t.stored) j["stored"] = false;
      if (t.copies > 1) j["copies"] = t.copies;
      if (!t.dtype.empty()) j["dtype"] = t.dtype;
      tensors.push_back(std::move(j));
    }
    nlohmann::json node = {{"module", n.module},
                           {"type", n.label},
                           {"output_shape", {"batch", seq, n.output_width}},
                           {"params", NodeParams(n).value()},
                           {"tensors", std::move(tensors)}};
    if (list) {
      listed += n.tensors.size();
    } else if (!n.tensors.empty()) {
      node["tensors_omitted"] = n.tensors.size();
    }
    return node;
  };
  nlohmann::json blocks = nlohmann::json::array();
  for (size_t b = 0; b < g.blocks.size(); ++b) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const Node& n : g.blocks[b].nodes) nodes.push_back(node_json(n));
    std::vector<int64_t> windows;
    int64_t count = 0;
    for (const LayerSpec& l : g.layers) {
      if (l.block != static_cast<int>(b)) continue;
      ++count;
      windows.push_back(l.window);
    }
    blocks.push_back({{"label", g.blocks[b].label},
                      {"layers", LayerRanges(g, static_cast<int>(b))},
                      {"count", count},
                      {"attention_windows", windows},
                      {"nodes", std::move(nodes)}});
  }
  auto list = [&](const std::vector<Node>& nodes) {
    nlohmann::json out = nlohmann::json::array();
    for (const Node& n : nodes) out.push_back(node_json(n));
    return out;
  };
  return {{"embeddings", list(g.embeddings)},
          {"blocks", std::move(blocks)},
          {"final", list(g.final_nodes)},
          {"extra_on_disk", list(g.extra_nodes)}};
}

// The checkpoint's lists are as long as its header makes them: each shows its first
// kMaxReportedItems entries, and "<list>_omitted" counts the rest.
nlohmann::json CheckpointJson(const CheckpointComparison& c) {
  nlohmann::json j;
  auto list = [&j](const char* key, const auto& items, uint64_t count, auto&& item_json) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < items.size() && i < kMaxReportedItems; ++i) {
      out.push_back(item_json(items[i]));
    }
    j[key] = std::move(out);
    j[std::string(key) + "_omitted"] = count - j[key].size();
  };
  auto name = [](const std::string& n) { return nlohmann::json(n); };
  auto mismatch = [](const TensorMismatch& m) {
    return nlohmann::json{{"name", m.name}, {"expected", m.expected}, {"actual", m.actual}};
  };
  list("missing", c.missing, c.missing_count, name);
  list("unexpected", c.unexpected, c.unexpected_count, name);
  list("shape_mismatches", c.shape_mismatches, c.shape_mismatch_count, mismatch);
  list("dtype_mismatches", c.dtype_mismatches, c.dtype_mismatch_count, mismatch);
  j.update({{"tensors", c.checkpoint_tensors},
            {"elements", c.checkpoint_elements},
            {"elements_by_dtype", c.elements_by_dtype},
            {"bytes_by_dtype", c.bytes_by_dtype},
            {"prefix_stripped", c.prefix_stripped},
            {"matched", c.matched},
            {"missing_elements", c.missing_elements},
            {"unexpected_elements", c.unexpected_elements},
            {"buffer_elements", c.buffer_elements},
            {"tied_copy_elements", c.tied_copy_elements},
            {"extra_elements", c.extra_elements},
            {"delta", c.delta},
            {"parameter_delta", c.parameter_delta}});
  return j;
}

// [{"name": "vision tower", "label": ..., "params": N}, ...]; [] for a model of one part.
nlohmann::json SectionsJson(const Estimate& e) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < e.graph.sections.size(); ++i) {
    out.push_back({{"name", e.graph.sections[i].name},
                   {"label", e.graph.sections[i].label},
                   {"params", i < e.params.by_section.size() ? e.params.by_section[i] : 0}});
  }
  return out;
}

}  // namespace

nlohmann::json EstimateToJson(const Estimate& e) {
  const ModelGraph& g = e.graph;
  const ParamCounts& p = e.params;
  nlohmann::json j;
  j["schema"] = kEstimateSchemaId;
  j["model"] = {{"model_type", g.model_type}, {"architecture", g.architecture},
                {"family", g.family},         {"dtype", g.dtype},
                {"vocab_size", g.vocab},      {"hidden_size", g.hidden},
                {"layers", g.layers.size()},  {"max_position_embeddings", g.max_positions},
                {"tied_embeddings", g.tied},  {"approximate", g.approximate},
                {"source", g.source == GraphSource::kModelled ? "modelled" : "checkpoint_tensors"},
                {"decodes", g.decodes}};
  j["params"] = {{"total", p.total},
                 {"on_disk", p.on_disk},
                 {"active", p.active},
                 {"buffers", p.buffers},
                 {"tied_copies", p.tied_copies},
                 {"extra_on_disk", p.extra_on_disk},
                 {"by_part",
                  {{"embedding", p.embedding},
                   {"attention", p.attention},
                   {"mlp", p.mlp},
                   {"norm", p.norm},
                   {"head", p.head},
                   {"other", p.other},
                   {"mixer", p.mixer}}},
                 {"by_section", SectionsJson(e)},
                 {"stored_bytes_by_dtype", e.stored_bytes_by_dtype},
                 {"lora_adapter", e.lora_params}};
  j["kv_cache"] = {{"bytes_per_element", e.kv.bytes_per_element},
                   {"bytes_per_token", e.kv.bytes_per_token},
                   {"context", e.kv.context},
                   {"bytes_per_sequence", e.kv.bytes_per_sequence},
                   {"sliding_layers", e.kv.sliding_layers},
                   {"latent", e.kv.latent},
                   {"cached_attention_layers", e.kv.cached_attention_layers},
                   {"cross_bytes_per_sequence", e.kv.cross_bytes_per_sequence},
                   {"state_bytes_per_sequence", e.kv.state_bytes_per_sequence},
                   {"state_layers", e.kv.state_layers}};
  j["workload"] = {
      {"seq", e.workload.seq},
      {"batch", e.workload.batch},
      {"context", e.workload.context},
      {"serving_batch", e.workload.ServingBatch()}};

  j["memory"] = nlohmann::json::array();
  for (const MemoryPlan& plan : e.memory) {
    nlohmann::json components = nlohmann::json::array();
    for (const MemoryComponent& c : plan.components) {
      components.push_back(
          {{"name", ItemName(c.item)}, {"bytes", c.bytes}, {"how", ExplainComponent(c, plan, e)}});
    }
    j["memory"].push_back({{"mode", plan.name()},
                           {"title", PlanTitle(plan, e)},
                           {"batch", plan.batch},
                           {"tokens", plan.tokens},
                           {"trainable_params", plan.trainable_params},
                           {"total_bytes", plan.TotalAt(plan.batch)},
                           {"fixed_bytes", plan.factor * plan.Fixed()},
                           {"per_sample_bytes", plan.factor * plan.PerSample()},
                           {"usable_fraction", plan.usable_fraction},
                           {"peak", plan.mode == MemoryMode::kServe ? "forward"
                                    : plan.peaks_at_step            ? "optimizer_step"
                                                                    : "loss"},
                           {"step_bytes", plan.factor * plan.Step()},
                           {"metric", MetricName(plan.metric)},
                           {"components", std::move(components)}});
  }

  j["fit"] = nlohmann::json::array();
  for (const CardFit& f : e.fit) {
    nlohmann::json modes = nlohmann::json::object();
    for (const ModeFit& m : f.modes) {
      nlohmann::json mj = {{"verdict", VerdictName(m.verdict)},
                           {"max_batch", m.max_batch},
                           {"safe_batch", m.safe_batch},
                           {"bytes_at_batch_1", m.bytes_at_batch1}};
      if (m.split) {
        std::vector<std::string> ranges;
        for (const auto& [first, last] : m.split->unit_ranges) {
          ranges.push_back(SplitRangeLabel(e.graph.layers.size() + 2, first, last));
        }
        mj["split"] = {{"cards", m.split->cards},
                       {"ranges", std::move(ranges)},
                       {"max_batch", m.split->max_batch}};
      }
      if (m.unsplittable) mj["unsplittable"] = true;
      modes[std::string(ModeName(m.mode))] = std::move(mj);
    }
    j["fit"].push_back({{"card", f.card.id},
                        {"name", f.card.name},
                        {"memory_gb", f.card.memory_gb},
                        {"bf16_tflops", f.card.bf16_tflops},
                        {"usd_per_hour", f.card.usd_per_hour},
                        {"modes", std::move(modes)}});
  }
  j["cost"] = nlohmann::json::array();
  for (const CostEstimate& c : e.cost) {
    j["cost"].push_back({{"card", c.card},
                         {"mode", ModeName(c.mode)},
                         {"cards", c.cards},
                         {"flops", c.flops},
                         {"hours", c.hours},
                         {"usd", c.usd},
                         {"steps", c.steps}});
  }
  j["structure"] = StructureJson(g, e.workload.seq);
  j["checkpoint"] = e.checkpoint ? CheckpointJson(*e.checkpoint) : nlohmann::json(nullptr);
  j["lints"] = nlohmann::json::array();
  for (const Lint& l : e.lints) {
    j["lints"].push_back(
        {{"severity", SeverityName(l.severity)}, {"code", l.code}, {"message", l.message}});
  }
  j["assumptions"] = nlohmann::json::array();
  j["assumptions"].push_back(
      {{"name", "preset"}, {"value", e.assumptions.preset}, {"description", "assumption preset"}});
  for (const AssumptionEntry& a : DescribeAssumptions(e.assumptions)) {
    j["assumptions"].push_back(
        {{"name", a.name}, {"value", a.value}, {"description", a.description}});
  }
  j["notes"] = g.notes;
  return j;
}

std::string LayerRanges(const ModelGraph& graph, int block) {
  std::string out;
  const int64_t n = static_cast<int64_t>(graph.layers.size());
  for (int64_t i = 0; i < n;) {
    if (graph.layers[static_cast<size_t>(i)].block != block) {
      ++i;
      continue;
    }
    int64_t j = i;
    while (j + 1 < n && graph.layers[static_cast<size_t>(j + 1)].block == block) ++j;
    if (!out.empty()) out += ", ";
    out += i == j ? std::to_string(i) : std::to_string(i) + "-" + std::to_string(j);
    i = j + 1;
  }
  return out;
}

}  // namespace hubwatch
