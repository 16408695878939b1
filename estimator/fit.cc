#include "estimator/fit.h"

#include <algorithm>
#include <cmath>

namespace hubwatch {
namespace {

constexpr int64_t kMaxBatch = 1 << 20;
constexpr int kMaxSplitCards = 256;

// What one card holds of a plan (memory.h: PeakBytes).
struct Load {
  double fixed = 0, loss_fixed = 0, per_sample = 0, step = 0, reserve = 0;
};

// Largest b whose PeakBytes fit `capacity`; 0 if none.
int64_t MaxBatch(double capacity, double factor, const Load& l) {
  const double room = (capacity / factor - l.fixed) / (1 + l.reserve);
  if (room < 0 || room < l.step || room < l.loss_fixed + l.per_sample) return 0;
  if (l.per_sample <= 0) return kMaxBatch;
  return std::min<int64_t>(kMaxBatch,
                           static_cast<int64_t>(std::floor((room - l.loss_fixed) / l.per_sample)));
}

Load WholeLoad(const MemoryPlan& plan) {
  return {plan.Fixed(), plan.loss_fixed, plan.PerSample(), plan.Step(), plan.reserve};
}

}  // namespace

std::string SplitRangeLabel(size_t units, size_t first, size_t last) {
  // Units: 0 embed, 1..n blocks, n+1 norm + head.
  const size_t n = units - 2;
  std::string label;
  if (first == 0) label = "embed";
  const size_t b0 = std::max<size_t>(first, 1), b1 = std::min(last, n);
  if (b0 <= b1) {
    if (!label.empty()) label += " + ";
    label += b0 == b1 ? "block " + std::to_string(b0 - 1)
                      : "blocks " + std::to_string(b0 - 1) + "-" + std::to_string(b1 - 1);
  }
  if (last == n + 1) label += label.empty() ? "norm + head" : " + norm + head";
  return label;
}

namespace {

// Greedy contiguous split at batch 1.
std::optional<CardSplit> Split(const MemoryPlan& plan, double capacity, bool& unsplittable) {
  const double limit = capacity / plan.factor;
  const size_t n = plan.units.size();
  const std::vector<double>& cf = plan.cumulative_fixed;
  const std::vector<double>& cp = plan.cumulative_per_sample;
  const std::vector<double>& cs = plan.cumulative_step;
  // What units [first, last] cost on one card. The head of a tied model needs a copy of the
  // embedding unless the embedding is on the same card.
  auto load = [&](size_t first, size_t last) {
    Load l{plan.per_card_fixed + cf[last + 1] - cf[first], plan.loss_fixed,
           plan.per_card_per_sample + cp[last + 1] - cp[first],
           plan.per_card_step + cs[last + 1] - cs[first], plan.reserve};
    if (last == n - 1 && first > 0) l.fixed += plan.tied_head_bytes;
    return l;
  };
  auto fits = [&](size_t first, size_t last) {
    const Load l = load(first, last);
    return PeakBytes(1, l.fixed, l.loss_fixed, l.per_sample, l.step, l.reserve, 1) <= limit;
  };
  CardSplit split;
  split.max_batch = kMaxBatch;
  for (size_t first = 0; first < n;) {
    if (!fits(first, first)) {
      unsplittable = true;
      return std::nullopt;
    }
    // The load grows with `last`: binary-search the furthest unit this card can take.
    size_t lo = first, hi = n - 1;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo + 1) / 2;
      if (fits(first, mid)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    split.unit_ranges.emplace_back(first, lo);
    split.max_batch = std::min(split.max_batch, MaxBatch(capacity, plan.factor, load(first, lo)));
    if (static_cast<int>(split.unit_ranges.size()) > kMaxSplitCards) return std::nullopt;
    first = lo + 1;
  }
  split.cards = static_cast<int>(split.unit_ranges.size());
  return split;
}

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kFits:
      return "fits";
    case Verdict::kBorderline:
      return "borderline";
    case Verdict::kNo:
      return "no";
  }
  return "no";
}

std::vector<CardFit> FitCards(const std::vector<MemoryPlan>& plans, const std::vector<Card>& cards,
                              const Assumptions& a) {
  std::vector<CardFit> out;
  out.reserve(cards.size());
  for (const Card& card : cards) {
    CardFit fit{card, {}};
    fit.modes.reserve(plans.size());
    for (const MemoryPlan& plan : plans) {
      const double capacity = card.memory_gb * 1e9 * plan.usable_fraction;
      ModeFit m;
      m.mode = plan.mode;
      m.max_batch = MaxBatch(capacity, plan.factor, WholeLoad(plan));
      m.safe_batch = MaxBatch(capacity, plan.factor * a.borderline_factor, WholeLoad(plan));
      m.bytes_at_batch1 = plan.TotalAt(1);
      m.verdict = m.bytes_at_batch1 * a.borderline_factor <= capacity ? Verdict::kFits
                  : m.bytes_at_batch1 <= capacity                     ? Verdict::kBorderline
                                                                      : Verdict::kNo;
      if (m.verdict == Verdict::kNo) m.split = Split(plan, capacity, m.unsplittable);
      fit.modes.push_back(std::move(m));
    }
    out.push_back(std::move(fit));
  }
  return out;
}

std::vector<CostEstimate> EstimateCost(const std::vector<CardFit>& fits, uint64_t active_params,
                                       int64_t seq, const Assumptions& a) {
  const double tokens = a.epochs * a.samples * static_cast<double>(seq);
  std::vector<CostEstimate> out;
  for (const CardFit& fit : fits) {
    for (const ModeFit& m : fit.modes) {
      if (m.mode == MemoryMode::kServe) continue;
      CostEstimate c;
      c.card = fit.card.id;
      c.mode = m.mode;
      c.cards = m.verdict != Verdict::kNo ? 1 : m.split ? m.split->cards : 0;
      c.flops = (m.mode == MemoryMode::kFullFinetune ? 6.0 : 4.0) *
                static_cast<double>(active_params) * tokens;
      c.steps = static_cast<int64_t>(std::ceil(a.epochs * a.samples / a.global_batch));
      if (c.cards > 0) {
        const double seconds = c.flops / (fit.card.bf16_tflops * 1e12 * a.mfu);
        c.hours = seconds / 3600;
        c.usd = c.hours * fit.card.usd_per_hour * c.cards;
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace hubwatch
