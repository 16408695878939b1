#include "estimator/estimate.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "estimator/base/json_nesting.h"
#include "estimator/checkpoint_graph.h"
#include "estimator/format.h"

namespace hubwatch {
namespace {

constexpr int64_t kMaxTokens = int64_t{1} << 24;
constexpr int64_t kMaxBatchInput = int64_t{1} << 20;

Status ValidateWorkload(const Workload& w) {
  auto check = [](const char* flag, int64_t v, int64_t max) -> Status {
    if (v < 1 || v > max) {
      return Error::InvalidInput(std::string(flag) + " must be between 1 and " +
                                 std::to_string(max) + ", got " + std::to_string(v));
    }
    return Status::Ok();
  };
  for (Status s :
       {check("--seq", w.seq, kMaxTokens), check("--batch", w.batch, kMaxBatchInput),
        check("--context", w.context, kMaxTokens),
        w.serving_batch == 0 ? Status::Ok()
                             : check("--serving-batch", w.serving_batch, kMaxBatchInput)}) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ValidateLora(const Assumptions& a) {
  if (a.lora_rank < 1 || a.lora_rank > kMaxLoraRank) {
    return Error::InvalidInput("--lora-rank must be between 1 and " + std::to_string(kMaxLoraRank) +
                               ", got " + std::to_string(a.lora_rank));
  }
  return Status::Ok();
}

// Every --lora-targets name must be a linear module of this architecture: a typo would
// otherwise adapt nothing and report 0 adapter parameters.
Status ValidateLoraTargets(const ModelGraph& g, const Assumptions& a) {
  if (a.lora_targets.empty()) return Status::Ok();
  const std::vector<std::string> known = LoraTargetModules(g);
  for (const std::string& target : a.lora_targets) {
    if (std::find(known.begin(), known.end(), target) != known.end()) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    return Error::InvalidInput("--lora-targets: '" + Clip(target) + "' is not a linear module of " +
                               g.model_type + " (known: " + list + ")");
  }
  return Status::Ok();
}

int DtypeBits(const std::string& dtype) { return SafetensorsDtypeBits(dtype).value_or(16); }

// Python's json module writes float('inf') and float('nan') as the bare words Infinity and NaN,
// which JSON does not have; real configs carry them (Mamba-Codestral's time_step_limit), and
// transformers reads them. The words outside strings become null: no count depends on them.
// Returns nullopt when the text has none.
std::optional<std::string> PythonWordsAsNull(std::string_view text) {
  std::string out;
  bool in_string = false, escaped = false, replaced = false;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool word = false;
    for (std::string_view w : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, w.size()) == w) {
        out += "null";
        i += w.size() - 1;
        word = replaced = true;
        break;
      }
    }
    if (!word) out += c;
  }
  if (!replaced) return std::nullopt;
  return out;
}

}  // namespace

Result<EstimateBasis> PrepareEstimate(const nlohmann::json& config, const EstimateInput& input) {
  Result<ModelGraph> graph = BuildModelGraph(config, input.build);
  // An architecture that is not modelled is estimated from its checkpoint's tensors, when the
  // headers are known (and --assume did not ask for a modelled one).
  if (!graph.ok() && graph.error().code == ErrorCode::kUnsupported && !input.headers.empty() &&
      input.build.assume.empty()) {
    graph = BuildGraphFromCheckpoint(input.headers, &config);
  }
  if (!graph.ok()) return graph.error();

  EstimateBasis b;
  b.graph = std::move(graph).value();
  Result<ParamCounts> params = CountParameters(b.graph);
  if (!params.ok()) return params.error();
  b.params = *params;

  std::map<std::string, Count> stored_bits;
  ForEachTensorSpec(b.graph, [&](const TensorSpec& t, uint64_t times) {
    if (!t.stored) return;
    const std::string& dtype = t.dtype.empty() ? b.graph.dtype : t.dtype;
    stored_bits[dtype] += t.Elements() * times * static_cast<uint64_t>(DtypeBits(dtype));
  });
  for (const auto& [dtype, bits] : stored_bits) {
    if (bits.overflowed()) return Error::Overflow("checkpoint bytes overflow 64 bits");
    b.stored_bytes_by_dtype[dtype] = bits.value() / 8;
  }
  if (!input.headers.empty() && b.graph.source == GraphSource::kModelled) {
    Result<CheckpointComparison> c = CompareWithCheckpoint(b.graph, b.params, input.headers);
    if (!c.ok()) return c.error();
    b.checkpoint = std::move(c).value();
  }
  b.lints = LintModel(config, b.graph, b.checkpoint ? &*b.checkpoint : nullptr);
  return b;
}

Result<Estimate> FinishEstimate(const EstimateBasis& basis, const EstimateInput& input) {
  if (Status s = ValidateWorkload(input.workload); !s.ok()) return s.error();
  if (Status s = ValidateLora(input.assumptions); !s.ok()) return s.error();
  if (Status s = ValidateLoraTargets(basis.graph, input.assumptions); !s.ok()) return s.error();

  Estimate e;
  e.graph = basis.graph;
  e.workload = input.workload;
  e.assumptions = input.assumptions;
  e.params = basis.params;
  e.stored_bytes_by_dtype = basis.stored_bytes_by_dtype;
  const Count lora = LoraParameters(e.graph, e.assumptions);
  if (lora.overflowed()) {
    return Error::Overflow("LoRA adapter parameters at rank " +
                           std::to_string(e.assumptions.lora_rank) + " overflow 64 bits");
  }
  e.lora_params = lora.value();
  e.kv = ComputeKvCache(e.graph, e.workload.context, e.assumptions.kv_bytes);
  e.memory = PlanMemory(e.graph, e.params, e.kv, e.workload, e.assumptions);
  e.fit = FitCards(e.memory, input.cards.empty() ? KnownCards() : input.cards, e.assumptions);
  e.cost = EstimateCost(e.fit, e.params.active, e.workload.seq, e.assumptions);
  e.checkpoint = basis.checkpoint;
  e.lints = basis.lints;
  return e;
}

Result<Estimate> EstimateModel(const nlohmann::json& config, const EstimateInput& input) {
  // The workload's errors first, before any of the model's.
  if (Status s = ValidateWorkload(input.workload); !s.ok()) return s.error();
  if (Status s = ValidateLora(input.assumptions); !s.ok()) return s.error();
  Result<EstimateBasis> basis = PrepareEstimate(config, input);
  if (!basis.ok()) return basis.error();
  return FinishEstimate(*basis, input);
}

size_t EstimateBasis::ApproxBytes() const {
  size_t bytes = sizeof(*this);
  auto nodes = [&](const std::vector<Node>& list) {
    for (const Node& n : list) {
      bytes += sizeof(Node) + n.module.size() + n.label.size();
      for (const TensorSpec& t : n.tensors) bytes += sizeof(TensorSpec) + t.name.size();
    }
  };
  nodes(graph.embeddings);
  for (const BlockTemplate& b : graph.blocks) nodes(b.nodes);
  nodes(graph.final_nodes);
  nodes(graph.extra_nodes);
  bytes += graph.layers.size() * sizeof(LayerSpec);
  if (checkpoint) {
    for (const std::string& n : checkpoint->missing) bytes += sizeof(n) + n.size();
    for (const std::string& n : checkpoint->unexpected) bytes += sizeof(n) + n.size();
    for (const auto* list : {&checkpoint->shape_mismatches, &checkpoint->dtype_mismatches}) {
      for (const TensorMismatch& m : *list) {
        bytes += sizeof(m) + m.name.size() + m.expected.size() + m.actual.size();
      }
    }
  }
  for (const Lint& l : lints) bytes += sizeof(Lint) + l.message.size();
  return bytes;
}

namespace {

// config.json text as JSON: nesting bounded, Python's bare Infinity and NaN read as null.
Result<nlohmann::json> ParseConfigText(std::string_view config_json) {
  if (JsonNestsDeeperThan(config_json)) {
    return Error::InvalidInput("config.json: nested deeper than " +
                               std::to_string(kMaxJsonNesting) + " levels");
  }
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(config_json);
  } catch (const nlohmann::json::exception& err) {  // parse_error, or out_of_range: 1e999
    const std::optional<std::string> python = PythonWordsAsNull(config_json);
    config = python ? nlohmann::json::parse(*python, nullptr, /*allow_exceptions=*/false)
                    : nlohmann::json(nlohmann::json::value_t::discarded);
    if (config.is_discarded()) {
      return Error::InvalidInput("config.json: not valid JSON (" + EchoSafe(err.what()) + ")");
    }
  }
  return config;
}

}  // namespace

Result<Estimate> EstimateModelFromText(std::string_view config_json, const EstimateInput& input) {
  Result<nlohmann::json> config = ParseConfigText(config_json);
  if (!config.ok()) return config.error();
  return EstimateModel(*config, input);
}

Result<EstimateBasis> PrepareEstimateFromText(std::string_view config_json,
                                              const EstimateInput& input) {
  Result<nlohmann::json> config = ParseConfigText(config_json);
  if (!config.ok()) return config.error();
  return PrepareEstimate(*config, input);
}

}  // namespace hubwatch
