// The model page's sections drawn from the estimate: the headline, our count against the
// checkpoint, what a run costs, and what fits on which card.

#include <algorithm>
#include <cmath>

#include "daemon/page/calibration_page.h"
#include "daemon/page/sections.h"
#include "estimator/format.h"
#include "estimator/report.h"

namespace hubwatch::page {
namespace {

std::string G(uint64_t v) { return Grouped(v); }
std::string Signed(int64_t v) {
  return (v > 0 ? "+" : v < 0 ? "-" : "") + Grouped(static_cast<uint64_t>(v < 0 ? -v : v));
}

const char* ModeTitle(MemoryMode m) {
  switch (m) {
    case MemoryMode::kFullFinetune:
      return "Full fine-tune";
    case MemoryMode::kLora:
      return "LoRA";
    case MemoryMode::kQlora:
      return "QLoRA";
    case MemoryMode::kServe:
      return "Serve";
  }
  return "";
}

const MemoryPlan* Plan(const Estimate& e, MemoryMode mode) {
  for (const MemoryPlan& p : e.memory) {
    if (p.mode == mode) return &p;
  }
  return nullptr;
}

double Batch1(const Estimate& e, MemoryMode mode) {
  const MemoryPlan* p = Plan(e, mode);
  return p ? p->TotalAt(1) : 0;
}

// Cards by memory, smallest first.
std::vector<const CardFit*> BySize(const Estimate& e) {
  std::vector<const CardFit*> out;
  for (const CardFit& f : e.fit) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(), [](const CardFit* a, const CardFit* b) {
    return a->card.memory_gb < b->card.memory_gb;
  });
  return out;
}

const ModeFit* FitOf(const CardFit& f, MemoryMode mode) {
  for (const ModeFit& m : f.modes) {
    if (m.mode == mode) return &m;
  }
  return nullptr;
}

// "layers 0–20 + 21–41" for a split of a plan over `layers` layers.
std::string SplitLayers(const CardSplit& split, size_t layers) {
  std::string out = "layers ";
  for (size_t i = 0; i < split.unit_ranges.size(); ++i) {
    const auto [first, last] = split.unit_ranges[i];
    if (i) out += " + ";
    const size_t lo = std::max<size_t>(first, 1) - 1;
    const size_t hi = std::min(last, layers);
    if (hi == 0 || lo >= layers) {
      out += first == 0 ? "embed" : "head";
    } else {
      out += std::to_string(lo) + (hi - 1 > lo ? "–" + std::to_string(hi - 1) : "");
    }
  }
  return out;
}

std::string FitCell(const ModeFit& m, size_t layers) {
  if (m.verdict == Verdict::kNo) {
    if (m.split) {
      return std::to_string(m.split->cards) + " cards at batch 1 (" +
             SplitLayers(*m.split, layers) + ")";
    }
    return m.unsplittable ? "does not fit (one layer exceeds the card)" : "does not fit at batch 1";
  }
  std::string cell = "batch " + std::to_string(m.max_batch);
  if (m.verdict == Verdict::kBorderline) cell += ", borderline";
  return cell;
}

Tone FitTone(const ModeFit& m) {
  return m.verdict == Verdict::kFits                    ? Tone::kGood
         : m.verdict == Verdict::kBorderline || m.split ? Tone::kWarn
                                                        : Tone::kBad;
}

std::string Usd(double usd) {
  return "$" + Grouped(static_cast<uint64_t>(std::llround(std::max(0.0, usd))));
}

const CostEstimate* CheapestRun(const Estimate& e, MemoryMode mode) {
  const CostEstimate* best = nullptr;
  for (const CostEstimate& c : e.cost) {
    if (c.mode != mode || c.cards == 0) continue;
    if (!best || c.usd < best->usd) best = &c;
  }
  return best;
}

const Card* CardById(const Estimate& e, const std::string& id) {
  for (const CardFit& f : e.fit) {
    if (f.card.id == id) return &f.card;
  }
  return nullptr;
}

// "; in 3 parts: vision tower 303,507,456, projector 20,979,712, language model ..." (empty
// for a model of one part).
std::string PartsClause(const Estimate& e) {
  const std::vector<GraphSection>& parts = e.graph.sections;
  if (parts.empty()) return "";
  std::string out = "; in " + std::to_string(parts.size()) + " parts: ";
  for (size_t i = 0; i < parts.size(); ++i) {
    const uint64_t params = i < e.params.by_section.size() ? e.params.by_section[i] : 0;
    out += (i ? ", " : "") + parts[i].name + " " + G(params);
  }
  return out;
}

// The KV cache tile: what one sequence keeps between decoding steps, or why it keeps nothing.
Tile KvTile(const Estimate& e) {
  if (!e.graph.decodes) return {"KV cache", "none", "reads its input in one pass"};
  if (e.kv.cached_attention_layers == 0 && e.kv.cross_bytes_per_sequence == 0) {
    if (e.kv.state_bytes_per_sequence > 0) {  // a state-space model: no cache grows
      return {"State per sequence", Gb(e.kv.state_bytes_per_sequence),
              "fixed: it does not grow with the context"};
    }
    return {"KV cache", "not counted", "no attention layer is known"};
  }
  std::string note = "at " + G(static_cast<uint64_t>(e.kv.context)) + " tokens";
  if (e.kv.state_bytes_per_sequence > 0) {
    note += ", " + Gb(e.kv.state_bytes_per_sequence) + " of it the mixers' fixed state";
  }
  if (e.kv.cross_bytes_per_sequence > 0) {
    note += ", " + Gb(e.kv.cross_bytes_per_sequence) + " of it cross-attention";
  }
  return {"KV cache", Gb(e.kv.bytes_per_sequence), note};
}

}  // namespace

std::string Gb(double bytes) {
  const double gb = bytes / 1e9;
  return Number(gb, gb < 10 ? 2 : 1) + " GB";
}

std::vector<Block> Headline(const Estimate& e) {
  const size_t layers = e.graph.layers.size();
  Spans s = {Text("Full fine-tuning at batch 1 needs "),
             Strong(Gb(Batch1(e, MemoryMode::kFullFinetune)))};
  const CardFit* one = nullptr;
  const CardFit* split = nullptr;
  for (const CardFit* f : BySize(e)) {
    const ModeFit* m = FitOf(*f, MemoryMode::kFullFinetune);
    if (!m) continue;
    if (!one && m->verdict != Verdict::kNo) one = f;
    if (m->split &&
        (!split || m->split->cards <= FitOf(*split, MemoryMode::kFullFinetune)->split->cards)) {
      split = f;
    }
  }
  if (one) {
    const ModeFit* m = FitOf(*one, MemoryMode::kFullFinetune);
    s.push_back(Text(": one " + one->card.name + " holds it (" + VerdictName(m->verdict) + ")"));
  } else if (split) {
    const ModeFit* m = FitOf(*split, MemoryMode::kFullFinetune);
    s.push_back(Text(", more than any one card: " + std::to_string(m->split->cards) + " × " +
                     split->card.name + " (" + SplitLayers(*m->split, layers) + ")"));
  } else {
    s.push_back(Text(", more than any card here holds"));
  }
  s.push_back(Text("; LoRA r=" + std::to_string(e.assumptions.lora_rank) + " needs "));
  s.push_back(Strong(Gb(Batch1(e, MemoryMode::kLora))));
  const CardFit* lora = nullptr;
  for (const CardFit* f : BySize(e)) {
    const ModeFit* m = FitOf(*f, MemoryMode::kLora);
    if (m && m->verdict != Verdict::kNo) {
      lora = f;
      break;
    }
  }
  if (lora) {
    const ModeFit* m = FitOf(*lora, MemoryMode::kLora);
    s.push_back(Text(", and the smallest card that holds it is the " + lora->card.name + " (" +
                     VerdictName(m->verdict) + ")."));
  } else {
    s.push_back(Text(", more than one card here holds."));
  }
  std::vector<Block> out;
  out.push_back(Paragraph{std::move(s)});
  if (e.graph.source == GraphSource::kCheckpointTensors) {
    out.push_back(Paragraph{
        {Strong("From the checkpoint's tensors: structure not modelled. "),
         Text(G(e.params.total) + " parameters counted exactly from the tensors its safetensors "
              "headers list (" +
              (e.graph.model_type.empty() ? std::string("no model_type")
                                          : "model_type " + e.graph.model_type) +
              ", which hubwatch does not model; " + std::to_string(layers) +
              " numbered layers); activations are approximate and the KV cache comes from "
              "config.json's generic keys" +
              (e.kv.cached_attention_layers ? "" : " (not given: no KV cache is counted)") + ".")}});
    return out;
  }
  out.push_back(Paragraph{
      {Text("Reconstructed from its own config.json with no weights read: " + G(e.params.total) +
            " parameters, " + e.graph.model_type + ", " + std::to_string(layers) + " layers" +
            (e.graph.approximate ? " (approximate)" : "") + PartsClause(e) + ".")}});
  if (!e.graph.decodes) {
    out.push_back(Paragraph{
        {Text("It reads its whole input in one forward pass and generates nothing, so it keeps "
              "no KV cache: serving holds that pass's activations per sequence.")}});
  }
  return out;
}

Section CheckpointSection(const Estimate& e) {
  Section s{"checkpoint", "Our count against the checkpoint", {}};
  if (e.graph.source == GraphSource::kCheckpointTensors) {
    s.blocks.push_back(Paragraph{
        {Text("The structure was read from the checkpoint itself, so the count is the "
              "checkpoint's own: " +
              G(e.params.on_disk) + " stored elements, " + G(e.params.total) +
              " of them parameters (the rest buffers and quantization metadata).")}});
    return s;
  }
  if (!e.checkpoint) {
    s.blocks.push_back(Paragraph{
        {Text("No safetensors headers are stored for this revision, so there is nothing to compare "
              "our count with: " +
              G(e.params.total) + " parameters from the structure.")}});
    return s;
  }
  const CheckpointComparison& c = *e.checkpoint;
  Table t{"Parameters: the structure's count beside the checkpoint's scalars",
          {"count", "value"},
          {},
          {false, true},
          true,
          {}};
  auto row = [&](std::string name, std::string value) {
    t.rows.push_back({{Text(std::move(name))}, {Text(std::move(value))}});
  };
  row("ours, from the structure", G(e.params.total));
  row("the checkpoint's scalars (safetensors headers)", G(c.checkpoint_elements));
  row("delta (checkpoint − ours)", Signed(c.delta));
  row("buffers stored", G(c.buffer_elements));
  row("tied copies stored", G(c.tied_copy_elements));
  row("stored, not loaded", G(c.extra_elements));
  row("parameter delta (unexplained)", Signed(c.parameter_delta));
  row("tensors in the checkpoint", G(c.checkpoint_tensors));
  row("tensors matched", G(c.matched));
  row("missing / unexpected", G(c.missing_count) + " / " + G(c.unexpected_count));
  row("shape / dtype mismatches", G(c.shape_mismatch_count) + " / " + G(c.dtype_mismatch_count));
  s.blocks.push_back(std::move(t));
  s.blocks.push_back(Paragraph{{Text(
      c.parameter_delta == 0
          ? "The counts agree tensor by tensor: the delta is explained by buffers, tied copies "
            "and tensors the model does not load."
          : "The checkpoint and the config disagree by " + Signed(c.parameter_delta) +
                " parameters that no known tensor explains (see the verifier below).")}});
  return s;
}

Section CostSection(const Estimate& e) {
  Section s{"cost", "What it costs to run", {}};
  const Assumptions& a = e.assumptions;
  bool valid = e.graph.layers.size() > 0;
  for (const Lint& l : e.lints) valid = valid && l.severity != LintSeverity::kError;
  if (e.checkpoint) valid = valid && e.checkpoint->parameter_delta == 0;
  Tiles tiles;
  tiles.tiles.push_back({"Layers", std::to_string(e.graph.layers.size()), e.graph.model_type});
  tiles.tiles.push_back({"Forward pass", valid ? "valid" : "not valid",
                         valid ? "shapes agree" : "see the verifier",
                         valid ? Tone::kGood : Tone::kBad});
  const CostEstimate* run = CheapestRun(e, MemoryMode::kFullFinetune);
  const CostEstimate* lora = CheapestRun(e, MemoryMode::kLora);
  if (run) {
    const Card* card = CardById(e, run->card);
    const std::string name = card ? card->name : run->card;
    tiles.tiles.push_back({"Priced on",
                           (run->cards > 1 ? std::to_string(run->cards) + " × " : "") + name,
                           card ? "$" + Number(card->usd_per_hour, 3) + " per card-hour" : ""});
    tiles.tiles.push_back(
        {"One full fine-tune", Usd(run->usd),
         Number(run->hours, 1) + " h" + (lora ? "; LoRA " + Usd(lora->usd) : "")});
  } else {
    tiles.tiles.push_back({"Priced on", "no card", "full fine-tuning fits none", Tone::kBad});
  }
  s.blocks.push_back(std::move(tiles));
  s.blocks.push_back(Paragraph{
      {Text("One run is " + Number(a.epochs) + " epochs of " + G(static_cast<uint64_t>(a.samples)) +
            " samples × " + G(static_cast<uint64_t>(e.workload.seq)) + " tokens, 6 × " +
            G(e.params.active) + " FLOPs per token (4× for LoRA) at " + Number(a.mfu * 100) +
            "% of the card's dense bf16 peak, on the card whose run is cheapest.")}});
  return s;
}

namespace {

// Where each mode's memory goes, as stacked bars against the cards' sizes: up to the first size
// that holds the largest bar.
BarChart MemoryChart(const Estimate& e) {
  enum Category { kWeights, kGradients, kOptimizer, kActivations, kLoss, kKv, kRuntime, kCount };
  auto category = [](MemoryItem item) {
    switch (item) {
      case MemoryItem::kGradients:
        return kGradients;
      case MemoryItem::kMasterWeights:
      case MemoryItem::kAdamFirstMoment:
      case MemoryItem::kAdamSecondMoment:
      case MemoryItem::kOptimizerStep:
        return kOptimizer;
      case MemoryItem::kActivations:
      case MemoryItem::kRecomputedBlock:
      case MemoryItem::kPrefill:
        return kActivations;
      case MemoryItem::kLogits:
        return kLoss;
      case MemoryItem::kKvCache:
        return kKv;
      case MemoryItem::kRuntime:
      case MemoryItem::kAllocatorReserve:
      case MemoryItem::kOverheadFactor:
        return kRuntime;
      default:  // weights in every form: working, frozen, quantized, adapters, gathered, dequant
        return kWeights;
    }
  };
  BarChart chart;
  chart.caption = "Where the memory goes, per mode, at batch " +
                  std::to_string(e.workload.batch) + " (serving: " +
                  std::to_string(e.workload.ServingBatch()) + " × " +
                  G(static_cast<uint64_t>(e.workload.context)) + " tokens), against the cards";
  chart.unit = "GB";
  chart.categories = {"weights", "gradients", "optimizer state", "activations",
                      "loss buffers", "KV cache", "runtime"};
  double largest = 0;
  for (const MemoryPlan& p : e.memory) {
    BarChart::Bar bar{ModeTitle(p.mode), std::vector<double>(kCount, 0.0)};
    double total = 0;
    for (const MemoryComponent& c : p.components) {
      bar.values[category(c.item)] += c.bytes / 1e9;
      total += c.bytes / 1e9;
    }
    largest = std::max(largest, total);
    chart.bars.push_back(std::move(bar));
  }
  for (const CardFit* f : BySize(e)) {
    const double gb = f->card.memory_gb;
    if (!chart.marks.empty() && chart.marks.back().value == gb) continue;
    if (!chart.marks.empty() && chart.marks.back().value >= largest) break;
    chart.marks.push_back({Number(gb) + " GB", gb});
  }
  return chart;
}

}  // namespace

Section MemorySection(const Estimate& e) {
  Section s{"memory", "Memory: what fits on which card", {}};
  const MemoryPlan* serve = Plan(e, MemoryMode::kServe);
  Tiles tiles;
  tiles.tiles.push_back({"Full fine-tune", Gb(Batch1(e, MemoryMode::kFullFinetune)),
                         "batch 1 × " + G(static_cast<uint64_t>(e.workload.seq)) + " tokens"});
  tiles.tiles.push_back({"LoRA r=" + std::to_string(e.assumptions.lora_rank),
                         Gb(Batch1(e, MemoryMode::kLora)), "batch 1"});
  tiles.tiles.push_back({"Serve weights", Gb(serve ? serve->Bytes(MemoryItem::kWeights) : 0),
                         Number(e.assumptions.serve_weight_bytes) + " B per parameter"});
  tiles.tiles.push_back(KvTile(e));
  s.blocks.push_back(std::move(tiles));
  s.blocks.push_back(MemoryChart(e));
  s.blocks.push_back(CalibrationLine());
  Table t{"What fits on which card, by mode (the largest batch that holds at " +
              G(static_cast<uint64_t>(e.workload.seq)) + " training / " +
              G(static_cast<uint64_t>(e.workload.context)) + " serving tokens)",
          {"card", "memory"},
          {},
          {false, true},
          true,
          {}};
  for (const MemoryPlan& p : e.memory) t.header.push_back(ModeTitle(p.mode));
  for (const CardFit* f : BySize(e)) {
    std::vector<Spans> row = {{Text(f->card.name)}, {Text(Number(f->card.memory_gb) + " GB")}};
    for (const ModeFit& m : f->modes) {
      row.push_back({Chip(FitCell(m, e.graph.layers.size()), FitTone(m))});
    }
    t.rows.push_back(std::move(row));
  }
  s.blocks.push_back(std::move(t));
  s.blocks.push_back(Paragraph{{Text(AssumptionsParagraph(e))}});
  return s;
}

std::string AssumptionsParagraph(const Estimate& e) {
  const Assumptions& a = e.assumptions;
  const double states =
      a.weight_bytes + a.grad_bytes + a.master_bytes + a.adam_m_bytes + a.adam_v_bytes;
  std::string p = "Assumptions (preset " + a.preset + "): full fine-tuning keeps AdamW states in " +
                  Number(a.weight_bytes) + " + " + Number(a.grad_bytes) + " + " +
                  Number(a.master_bytes) + " + " + Number(a.adam_m_bytes) + " + " +
                  Number(a.adam_v_bytes) + " = " + Number(states) + " B per parameter";
  if (a.state_factor != 1) p += " × " + Number(a.state_factor);
  p += ", activations in " + Number(a.activation_bytes) + " B with " +
       (a.eager_attention ? "eager attention" : "SDPA/flash attention") +
       (a.checkpointing == Checkpointing::kFull        ? " and gradient checkpointing"
        : a.checkpointing == Checkpointing::kSelective ? " and selective checkpointing"
                                                       : ", no checkpointing") +
       ", the loss's buffers in " + Number(a.logits_bytes) + " B per logit, " +
       Number(a.cuda_context_gb) + " GB of CUDA context per card and " +
       Number(a.fragmentation * 100) + "% allocator reserve over transient tensors; LoRA r=" +
       std::to_string(a.lora_rank) + " adapts " +
       (a.lora_targets.empty() ? std::string("every linear but the head") : "the listed modules") +
       " over a frozen " + Number(a.lora_base_bytes) + " B base; QLoRA stores NF4 in blocks of " +
       std::to_string(a.qlora_block) + (a.qlora_double_quant ? " (double-quantized)" : "") +
       "; serving holds " + Number(a.serve_weight_bytes) + " B weights and a " +
       Number(a.kv_bytes) + " B KV cache in " + Number(a.serve_utilization * 100) + "% of the card";
  if (a.serve_overhead_factor != 1) p += " × " + Number(a.serve_overhead_factor);
  p += ". A fit is borderline when it holds on the estimate but not on the estimate × " +
       Number(a.borderline_factor) +
       "; a model too large for one card is split into contiguous "
       "layer ranges over the fewest cards.";
  return p;
}

}  // namespace hubwatch::page
