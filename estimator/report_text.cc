// The readable report and its Markdown twin: one document of sections, paragraphs and tables,
// rendered two ways so the two never drift apart.

#include <algorithm>
#include <variant>

#include "estimator/explain.h"
#include "estimator/format.h"
#include "estimator/report.h"

namespace hubwatch {
namespace {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;  // right-aligned columns
};

struct Section {
  std::string title;
  std::vector<std::variant<std::string, Table>> items;
};

std::string G(uint64_t v) { return Grouped(v); }
std::string GB(double bytes) { return Gigabytes(bytes); }

std::string FitCell(const ModeFit& m) {
  if (m.verdict == Verdict::kNo) {
    if (m.split) {
      return "no; " + std::to_string(m.split->cards) +
             " cards, b<=" + std::to_string(m.split->max_batch);
    }
    return m.unsplittable ? "no (a layer exceeds a card)" : "no";
  }
  return std::string(VerdictName(m.verdict)) + ", b<=" + std::to_string(m.max_batch) + " (safe " +
         std::to_string(m.safe_batch) + ")";
}

Section Parameters(const Estimate& e) {
  const ParamCounts& p = e.params;
  Section s{"Parameters", {}};
  Table t{{"count", "value"}, {}, {false, true}};
  t.rows.push_back({"unique parameters", G(p.total)});
  for (auto [name, v] : {std::pair<const char*, uint64_t>{"embedding", p.embedding},
                         {"attention", p.attention},
                         {"MLP / experts", p.mlp},
                         {"norms", p.norm},
                         {"head", p.head}}) {
    t.rows.push_back({std::string("  ") + name, G(v)});
  }
  if (p.mixer) t.rows.push_back({"  sequence mixers (SSM, conv)", G(p.mixer)});
  if (p.other) t.rows.push_back({"  other (modules from the checkpoint)", G(p.other)});
  for (size_t i = 0; i < e.graph.sections.size() && i < p.by_section.size(); ++i) {
    t.rows.push_back({"  part: " + e.graph.sections[i].name, G(p.by_section[i])});
  }
  if (p.active != p.total) t.rows.push_back({"active per token (MoE)", G(p.active)});
  t.rows.push_back({"tensor elements on disk", G(p.on_disk)});
  if (p.buffers) t.rows.push_back({"  of which buffers", G(p.buffers)});
  if (p.tied_copies) t.rows.push_back({"  of which tied copies", G(p.tied_copies)});
  if (p.extra_on_disk) t.rows.push_back({"  of which not loaded", G(p.extra_on_disk)});
  for (const auto& [dtype, bytes] : e.stored_bytes_by_dtype) {
    t.rows.push_back(
        {"checkpoint bytes, " + dtype, G(bytes) + " (" + GB(static_cast<double>(bytes)) + ")"});
  }
  t.rows.push_back({"LoRA adapter params (r=" + std::to_string(e.assumptions.lora_rank) + ")",
                    G(e.lora_params)});
  s.items.push_back(std::move(t));
  return s;
}

Section KvCacheSection(const Estimate& e) {
  Section s{"KV cache", {}};
  const KvCache& kv = e.kv;
  if (!e.graph.decodes) {
    s.items.push_back(std::string(
        "none: it reads its whole input in one forward pass and generates nothing; serving "
        "holds that pass's activations per sequence (Memory)"));
    return s;
  }
  std::string what = kv.latent ? "MLA latent (kv_lora_rank + rope) per layer" : "K and V per layer";
  s.items.push_back(G(static_cast<uint64_t>(kv.bytes_per_token)) +
                    " bytes per token over all layers at " + Number(kv.bytes_per_element) +
                    " B per element (" + what + ", every layer holding the full context)");
  std::string seq = GB(kv.bytes_per_sequence) + " for one " + G(static_cast<uint64_t>(kv.context)) +
                    "-token sequence";
  if (kv.sliding_layers) {
    seq += " (" + std::to_string(kv.sliding_layers) + " of " +
           std::to_string(kv.layer_bytes_per_token.size()) +
           " layers use a sliding window and hold only their window)";
  }
  s.items.push_back(seq);
  if (kv.state_layers) {
    // A pure SSM keeps no K/V at all; a hybrid's attention layers still do.
    const std::string mixers = std::to_string(kv.state_layers) + " of " +
                               std::to_string(kv.layer_bytes_per_token.size()) +
                               " layers run a state-space / linear-attention mixer";
    s.items.push_back(mixers +
                      (kv.cached_attention_layers ? ", whose cache is a fixed state per sequence: "
                                                  : ": the KV cache becomes a fixed state per "
                                                    "sequence: ") +
                      Number(kv.state_bytes_per_sequence / 1048576, 1) +
                      " MiB (conv + recurrent state, included above; it does not grow with the "
                      "context)");
  }
  return s;
}

Section MemorySection(const Estimate& e) {
  Section s{"Memory (batch " + std::to_string(e.workload.batch) + ")", {}};
  for (const MemoryPlan& plan : e.memory) {
    s.items.push_back(PlanTitle(plan, e) + ": " + GB(plan.TotalAt(plan.batch)) + " at batch " +
                      std::to_string(plan.batch) + " x " + G(static_cast<uint64_t>(plan.tokens)) +
                      " tokens");
    Table t{{"component", "GB", "how"}, {}, {false, true, false}};
    for (const MemoryComponent& c : plan.components) {
      t.rows.push_back(
          {std::string(ItemName(c.item)), Number(c.bytes / 1e9, 2), ExplainComponent(c, plan, e)});
    }
    s.items.push_back(std::move(t));
  }
  return s;
}

Section FitSection(const Estimate& e) {
  Section s{"Fit per card", {}};
  s.items.push_back("b<= is the largest batch that holds on the estimate (serving: concurrent " +
                    G(static_cast<uint64_t>(e.workload.context)) +
                    "-token sequences); safe: on estimate x " +
                    Number(e.assumptions.borderline_factor) +
                    ". borderline: batch 1 holds on the estimate but not with that margin.");
  Table t{{"card", "memory"}, {}, {false, true}};
  for (const MemoryPlan& plan : e.memory) {
    t.header.push_back(std::string(plan.name()));
    t.numeric.push_back(false);
  }
  std::vector<std::string> splits;
  for (const CardFit& f : e.fit) {
    std::vector<std::string> row = {f.card.name, Number(f.card.memory_gb) + " GB"};
    for (const ModeFit& m : f.modes) {
      row.push_back(FitCell(m));
      if (m.split) {
        std::string line = f.card.name + ", " + std::string(ModeName(m.mode)) + ": ";
        for (size_t i = 0; i < m.split->unit_ranges.size(); ++i) {
          const auto [first, last] = m.split->unit_ranges[i];
          line += (i ? " | " : "") + SplitRangeLabel(e.graph.layers.size() + 2, first, last);
        }
        splits.push_back(line);
      }
    }
    t.rows.push_back(std::move(row));
  }
  s.items.push_back(std::move(t));
  if (!splits.empty()) {
    s.items.push_back("Layer ranges per card where one card cannot hold batch 1:");
    Table st{{"split"}, {}, {false}};
    for (std::string& line : splits) st.rows.push_back({std::move(line)});
    s.items.push_back(std::move(st));
  }
  return s;
}

Section CostSection(const Estimate& e) {
  const Assumptions& a = e.assumptions;
  Section s{"Training cost (roofline)", {}};
  s.items.push_back(
      Number(a.epochs) + " epochs x " + G(static_cast<uint64_t>(a.samples)) + " samples x " +
      G(static_cast<uint64_t>(e.workload.seq)) + " tokens; 6N (full) / 4N " +
      "(LoRA, QLoRA) FLOPs per token with N = " + G(e.params.active) + "; card peak x " +
      Number(a.mfu) + " utilisation; " + std::to_string(e.cost.empty() ? 0 : e.cost.front().steps) +
      " steps at batch " + Number(a.global_batch));
  Table t{{"card", "mode", "cards", "hours", "USD"}, {}, {false, false, true, true, true}};
  for (const CostEstimate& c : e.cost) {
    if (c.cards == 0) {
      t.rows.push_back({c.card, std::string(ModeName(c.mode)), "-", "does not fit", "-"});
    } else {
      t.rows.push_back({c.card, std::string(ModeName(c.mode)), std::to_string(c.cards),
                        Number(c.hours, 1), Number(c.usd, 0)});
    }
  }
  s.items.push_back(std::move(t));
  return s;
}

Section StructureSection(const Estimate& e) {
  const ModelGraph& g = e.graph;
  const std::string seq = std::to_string(e.workload.seq);
  Section s{"Structure (output shapes at seq " + seq + ")", {g.family}};
  Table t{{"layers", "module", "type", "output shape", "params"},
          {},
          {false, false, false, false, true}};
  auto row = [&](const std::string& layers, const Node& n) {
    t.rows.push_back({layers, n.module, n.label,
                      "(b, " + seq + ", " + std::to_string(n.output_width) + ")",
                      G(NodeParams(n).value())});
  };
  for (const Node& n : g.embeddings) row("", n);
  for (size_t b = 0; b < g.blocks.size(); ++b) {
    const std::string ranges = LayerRanges(g, static_cast<int>(b));
    int64_t count = 0, sliding = 0, window = 0;
    for (const LayerSpec& l : g.layers) {
      if (l.block != static_cast<int>(b)) continue;
      ++count;
      if (l.window) {
        ++sliding;
        window = l.window;
      }
    }
    for (const Node& n : g.blocks[b].nodes) {
      Node shown = n;
      if (n.kind == NodeKind::kAttention && sliding) {
        shown.label += sliding == count ? ", sliding window " + std::to_string(window)
                                        : ", sliding " + std::to_string(window) + " on " +
                                              std::to_string(sliding) + " of " +
                                              std::to_string(count) + " layers";
      }
      row(ranges + " (x" + std::to_string(count) + ")", shown);
    }
  }
  for (const Node& n : g.final_nodes) row("", n);
  s.items.push_back(std::move(t));
  if (!g.extra_nodes.empty()) {
    s.items.push_back(std::to_string(g.extra_nodes.size()) +
                      " more modules are stored on disk but not loaded (see notes)");
  }
  return s;
}

Section CheckpointSection(const CheckpointComparison& c, const Estimate& e) {
  Section s{"Checkpoint comparison", {}};
  s.items.push_back("checkpoint: " + G(c.checkpoint_tensors) + " tensors, " +
                    G(c.checkpoint_elements) + " elements; ours: " + G(e.params.total) +
                    " parameters. delta " + std::to_string(c.delta) + " = " + G(c.buffer_elements) +
                    " buffer + " + G(c.tied_copy_elements) + " tied-copy + " + G(c.extra_elements) +
                    " not-loaded elements + parameter delta " + std::to_string(c.parameter_delta) +
                    (c.parameter_delta == 0 ? " (exact, tensor by tensor)" : "") +
                    (c.prefix_stripped
                         ? "; the checkpoint omits the \"" + e.graph.base_prefix + "\" prefix"
                         : ""));
  Table t{{"check", "count", "tensors"}, {}, {false, true, false}};
  constexpr size_t kShown = 5;
  auto first = [](const auto& v, uint64_t count, auto&& text) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < kShown; ++i) out += (i ? ", " : "") + text(v[i]);
    if (count > kShown) out += ", ... (" + G(count - kShown) + " more)";
    return out;
  };
  auto names = [&](const std::vector<std::string>& v, uint64_t count) {
    return first(v, count, [](const std::string& name) { return name; });
  };
  auto mismatch_names = [&](const std::vector<TensorMismatch>& v, uint64_t count) {
    return first(v, count, [](const TensorMismatch& m) {
      return m.name + " " + m.actual + " (expected " + m.expected + ")";
    });
  };
  t.rows.push_back({"matched", G(c.matched), ""});
  t.rows.push_back({"missing", G(c.missing_count), names(c.missing, c.missing_count)});
  t.rows.push_back(
      {"unexpected", G(c.unexpected_count), names(c.unexpected, c.unexpected_count)});
  t.rows.push_back({"shape mismatches", G(c.shape_mismatch_count),
                    mismatch_names(c.shape_mismatches, c.shape_mismatch_count)});
  t.rows.push_back({"dtype mismatches", G(c.dtype_mismatch_count),
                    mismatch_names(c.dtype_mismatches, c.dtype_mismatch_count)});
  s.items.push_back(std::move(t));
  return s;
}

Section LintSection(const Estimate& e) {
  Section s{"Lints", {}};
  if (e.lints.empty()) s.items.push_back("none");
  for (const Lint& l : e.lints) {
    s.items.push_back(std::string(SeverityName(l.severity)) + " [" + l.code + "] " + l.message);
  }
  return s;
}

Section AssumptionSection(const Estimate& e) {
  Section s{"Assumptions (preset " + e.assumptions.preset + "; override with --set NAME=VALUE)",
            {}};
  Table t{{"name", "value", "meaning"}, {}, {false, true, false}};
  for (const AssumptionEntry& a : DescribeAssumptions(e.assumptions)) {
    t.rows.push_back({a.name, a.value, a.description});
  }
  s.items.push_back(std::move(t));
  for (const std::string& note : e.graph.notes) s.items.push_back("note: " + note);
  return s;
}

std::vector<Section> Document(const Estimate& e) {
  std::vector<Section> doc = {Parameters(e), KvCacheSection(e), MemorySection(e),
                              FitSection(e), CostSection(e),    StructureSection(e)};
  if (e.checkpoint) doc.push_back(CheckpointSection(*e.checkpoint, e));
  doc.push_back(LintSection(e));
  doc.push_back(AssumptionSection(e));
  // Names, notes and lints quote upstream text; none of it may drive the terminal.
  for (Section& s : doc) {
    for (auto& item : s.items) {
      if (std::string* p = std::get_if<std::string>(&item)) {
        *p = EscapeControls(*p);
        continue;
      }
      for (auto& row : std::get<Table>(item).rows) {
        for (std::string& cell : row) cell = EscapeControls(cell);
      }
    }
  }
  return doc;
}

std::string Title(const Estimate& e) {
  const ModelGraph& g = e.graph;
  return EscapeControls(
      "hubwatch estimate: " + (g.architecture.empty() ? g.model_type : g.architecture) + " (" +
      g.model_type + ", " + G(e.params.total) + " parameters" +
      (g.approximate ? ", APPROXIMATE" : "") +
      (g.source == GraphSource::kCheckpointTensors
           ? ", from the checkpoint's tensors: structure not modelled"
           : "") +
      ")");
}

std::string TextTable(const Table& t) {
  std::vector<size_t> width(t.header.size(), 0);
  for (size_t c = 0; c < t.header.size(); ++c) width[c] = t.header[c].size();
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = " ";
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      out += " " + (t.numeric[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : ""));
      if (c + 1 < cells.size()) out += " ";
    }
    return out + "\n";
  };
  std::string out = line(t.header);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  out += line(rule);
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string MarkdownTable(const Table& t) {
  auto escape = [](const std::string& s) {
    std::string out;
    for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return out;
  };
  std::string out = "|";
  for (const std::string& h : t.header) out += " " + escape(h) + " |";
  out += "\n|";
  for (bool numeric : t.numeric) out += numeric ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const std::string& cell : row) out += " " + escape(cell) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string RenderText(const Estimate& e) {
  std::string out = Title(e) + "\n";
  for (const Section& s : Document(e)) {
    out += "\n" + s.title + "\n" + std::string(s.title.size(), '=') + "\n";
    for (const auto& item : s.items) {
      if (const std::string* p = std::get_if<std::string>(&item)) {
        out += *p + "\n";
      } else {
        out += TextTable(std::get<Table>(item));
      }
    }
  }
  return out;
}

std::string RenderMarkdown(const Estimate& e) {
  std::string out = "# " + Title(e) + "\n";
  for (const Section& s : Document(e)) {
    out += "\n## " + s.title + "\n\n";
    for (const auto& item : s.items) {
      if (const std::string* p = std::get_if<std::string>(&item)) {
        out += *p + "\n\n";
      } else {
        out += MarkdownTable(std::get<Table>(item)) + "\n";
      }
    }
  }
  return out;
}

}  // namespace hubwatch
