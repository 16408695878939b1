#pragma once

// EstimateModel: the whole estimate of one model revision, from its config.json and optionally
// its checkpoint's safetensors headers: structure, exact counts, KV cache, memory plans, fit
// per card, training cost, lints, and every assumption used. This is the estimator's one entry
// point; the CLI, the pipeline and the HTTP API all call it. Pure function; thread-safe.

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/architectures.h"
#include "estimator/assumptions.h"
#include "estimator/base/result.h"
#include "estimator/checkpoint.h"
#include "estimator/fit.h"
#include "estimator/formats/safetensors_header.h"
#include "estimator/hardware.h"
#include "estimator/kv_cache.h"
#include "estimator/lints.h"
#include "estimator/memory.h"
#include "estimator/model_graph.h"

namespace hubwatch {

struct EstimateInput {
  Workload workload;
  Assumptions assumptions;
  std::vector<Card> cards;  // empty: every known card
  BuildOptions build;
  std::vector<SafetensorsHeader> headers;  // the checkpoint's shards, if known
};

struct Estimate {
  ModelGraph graph;
  ParamCounts params;
  std::map<std::string, uint64_t> stored_bytes_by_dtype;  // of the reference checkpoint
  uint64_t lora_params = 0;
  KvCache kv;
  std::vector<MemoryPlan> memory;  // full_finetune, lora, qlora, serve
  std::vector<CardFit> fit;
  std::vector<CostEstimate> cost;
  std::vector<Lint> lints;
  std::optional<CheckpointComparison> checkpoint;
  Workload workload;
  Assumptions assumptions;
};

Result<Estimate> EstimateModel(const nlohmann::json& config, const EstimateInput& input);

// Parses config.json text first; malformed JSON is a clear error naming the position.
Result<Estimate> EstimateModelFromText(std::string_view config_json, const EstimateInput& input);

// The part of an estimate that depends on the model alone (its config.json, its checkpoint's
// headers and input.build), not on the workload, the assumptions or the cards: the structure,
// the exact counts, the comparison with the checkpoint and the lints. It is the costly part
// (every tensor of every shard is read); the rest is arithmetic over it, so whoever estimates
// one revision for many workloads prepares it once and finishes it per workload:
//
//   EstimateModel(config, input) == FinishEstimate(*PrepareEstimate(config, input), input)
//
// Plain value; immutable once prepared, so one basis may be finished from many threads.
struct EstimateBasis {
  ModelGraph graph;
  ParamCounts params;
  std::map<std::string, uint64_t> stored_bytes_by_dtype;
  std::optional<CheckpointComparison> checkpoint;
  std::vector<Lint> lints;

  // About what holding it costs in memory (its graph's nodes and tensors, its lists), for a
  // cache that bounds what it keeps.
  size_t ApproxBytes() const;
};

// Reads input.build and input.headers only.
Result<EstimateBasis> PrepareEstimate(const nlohmann::json& config, const EstimateInput& input);
Result<EstimateBasis> PrepareEstimateFromText(std::string_view config_json,
                                              const EstimateInput& input);
// Reads input.workload, input.assumptions and input.cards; ignores input.build and headers.
Result<Estimate> FinishEstimate(const EstimateBasis& basis, const EstimateInput& input);

}  // namespace hubwatch
