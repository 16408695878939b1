#pragma once

// The accelerator cards hubwatch fits models onto: memory, dense bf16 peak and an assumed hourly
// price. One table, in hardware.cc; every figure is an assumption the output prints and the user
// can override. Plain values; thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch {

struct Card {
  std::string id;           // "a100-80gb": what --cards takes
  std::string name;         // "A100 80GB"
  double memory_gb = 0;     // decimal GB, as marketed
  double bf16_tflops = 0;   // dense (no sparsity) bf16 tensor peak; T4: fp16 (no bf16)
  double usd_per_hour = 0;  // assumed on-demand cloud price for one card
};

const std::vector<Card>& KnownCards();

// At most this many cards in one list, after duplicates are dropped (every card costs a row of
// the fit table and a plan for each mode), and at most kMaxCardEntries entries before: a list
// is refused at its first entry over either cap, before any card is looked up or planned.
inline constexpr size_t kMaxCards = 16;
inline constexpr size_t kMaxCardEntries = 64;

// Parses --cards: a comma-separated list of card ids or aliases ("a100-80gb,h100,4090"), or
// custom cards as id=MEMORY_GB:TFLOPS:USD_PER_HOUR ("mi250=128:362:2.1"). Empty -> all known.
// A card named twice (an alias and its id count as the same card) is kept once, at its first
// place; a custom card whose id is already in the list is an error (two meanings for one id).
Result<std::vector<Card>> ParseCards(std::string_view list);

}  // namespace hubwatch
