#pragma once

// What fits on which card, and what training costs there.
//
// For each card and memory plan: the largest batch that holds on the estimate, the largest that
// still holds on estimate x borderline_factor ("safe"), and the verdict at batch 1: fits (holds
// with the margin), borderline (holds on the estimate only) or no. When batch 1 does not fit
// one card, the layers are split into contiguous ranges over the fewest cards (embeddings with
// the first, norm and head with the last), filled greedily, which is optimal for contiguous
// ranges. Cost is a roofline: 6*N*tokens FLOPs for a full fine-tune, 4*N*tokens for LoRA and
// QLoRA (N: active parameters), at the card's dense bf16 peak x mfu; split cards run as a
// pipeline without overlap, so time is that of one card and the price is that of all of them.
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "estimator/assumptions.h"
#include "estimator/hardware.h"
#include "estimator/memory.h"

namespace hubwatch {

enum class Verdict { kFits, kBorderline, kNo };
const char* VerdictName(Verdict v);  // "fits", "borderline", "no"

struct CardSplit {
  int cards = 0;
  // Per card, the first and last MemoryPlan unit it holds (0: embeddings, 1..L: layers 0..L-1,
  // L+1: final norm + head).
  std::vector<std::pair<size_t, size_t>> unit_ranges;
  int64_t max_batch = 0;  // on the estimate, over the split
};

// "embed + blocks 0-13", "blocks 14-27", "blocks 28-41 + norm + head" for a plan of `units`.
std::string SplitRangeLabel(size_t units, size_t first, size_t last);

struct ModeFit {
  MemoryMode mode = MemoryMode::kFullFinetune;
  int64_t max_batch = 0;           // on one card, on the estimate (0: batch 1 does not fit)
  int64_t safe_batch = 0;          // on one card, on estimate x borderline_factor
  Verdict verdict = Verdict::kNo;  // at batch 1 on one card
  double bytes_at_batch1 = 0;
  std::optional<CardSplit> split;  // when batch 1 does not fit one card
  bool unsplittable = false;       // not even one layer fits a card
};

struct CardFit {
  Card card;
  std::vector<ModeFit> modes;  // in plan order
};

struct CostEstimate {
  std::string card;                             // card id
  MemoryMode mode = MemoryMode::kFullFinetune;  // a training mode
  int cards = 1;  // cards needed (split) at batch 1; 0: does not fit at all
  double flops = 0;
  double hours = 0;
  double usd = 0;
  int64_t steps = 0;  // optimizer steps at cost.global_batch
};

std::vector<CardFit> FitCards(const std::vector<MemoryPlan>& plans, const std::vector<Card>& cards,
                              const Assumptions& a);

// Training cost for every card and training plan. tokens per sample = workload seq.
std::vector<CostEstimate> EstimateCost(const std::vector<CardFit>& fits, uint64_t active_params,
                                       int64_t seq, const Assumptions& a);

}  // namespace hubwatch
