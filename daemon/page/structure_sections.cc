// The model page's structure, verifier and commands sections.

#include <algorithm>
#include <cctype>
#include <map>

#include "daemon/page/sections.h"
#include "estimator/format.h"
#include "estimator/report.h"

namespace hubwatch::page {
namespace {

std::string G(uint64_t v) { return Grouped(v); }

std::string Module(const std::string& pattern, size_t layer) {
  std::string out = pattern;
  const size_t at = out.find("{i}");
  if (at != std::string::npos) out.replace(at, 3, std::to_string(layer));
  return out;
}

// A file name the commands may quote as it is: [A-Za-z0-9._-] only.
bool PlainFileName(const std::string& name) {
  return !name.empty() && name.size() <= 128 && name[0] != '-' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

// A composite's parts (a vision tower, a projector, a language model ...), each counted.
Table PartsTable(const Estimate& e) {
  Table t{"Parts, each counted on its own", {"part", "what it is", "parameters", "share"}, {},
          {false, false, true, true}, true, {}};
  for (size_t i = 0; i < e.graph.sections.size(); ++i) {
    const GraphSection& part = e.graph.sections[i];
    const uint64_t params = i < e.params.by_section.size() ? e.params.by_section[i] : 0;
    const double share = e.params.total ? 100.0 * static_cast<double>(params) /
                                              static_cast<double>(e.params.total)
                                        : 0;
    t.rows.push_back({{Text(part.name)}, {Text(part.label)}, {Text(G(params))},
                      {Text(Number(share, 1) + "%")}});
  }
  return t;
}

}  // namespace

Section StructureSection(const Estimate& e) {
  const ModelGraph& g = e.graph;
  const int64_t context = g.max_positions > 0 ? g.max_positions : e.workload.seq;
  const std::string tokens = G(static_cast<uint64_t>(context));
  Section s{"structure", "Structure", {}};
  s.blocks.push_back(
      Paragraph{{Text(g.family + (g.family.ends_with('.') ? " " : ". ") +
                      "Output shapes per sequence at the config's maximum context of " + tokens +
                      " tokens.")}});
  if (!g.notes.empty()) {
    // The estimator's notes: defaults it used, what it assumed, what it could not read. Few,
    // each built from clipped config values.
    constexpr size_t kMaxNotes = 24;
    BulletList notes;
    for (size_t i = 0; i < g.notes.size() && i < kMaxNotes; ++i) {
      notes.items.push_back({Text(g.notes[i])});
    }
    if (g.notes.size() > kMaxNotes) {
      notes.items.push_back({Text("and " + G(g.notes.size() - kMaxNotes) + " more notes")});
    }
    s.blocks.push_back(Paragraph{{Text("What the estimate assumed or could not read:")}});
    s.blocks.push_back(std::move(notes));
  }
  if (!g.sections.empty()) s.blocks.push_back(PartsTable(e));
  auto shape = [&](const Node& n) {
    return tokens + " × " + G(static_cast<uint64_t>(n.output_width));
  };
  // By template: the embedding, each block's nodes once with their layer ranges, the end.
  Table summary{"Modules by block template",
                {"layers", "module", "type", "output shape", "parameters"},
                {},
                {false, false, false, true, true},
                false,
                {}};
  auto add = [&](Table& t, const std::string& layers, const std::string& module,
                 const std::string& label, const Node& n) {
    t.rows.push_back({{Text(layers)},
                      {Code(module)},
                      {Text(label)},
                      {Text(shape(n))},
                      {Text(G(NodeParams(n).value()))}});
  };
  for (const Node& n : g.embeddings) add(summary, "", n.module, n.label, n);
  for (size_t b = 0; b < g.blocks.size(); ++b) {
    size_t count = 0;
    for (const LayerSpec& l : g.layers) count += l.block == static_cast<int>(b);
    const std::string ranges =
        LayerRanges(g, static_cast<int>(b)) + " (×" + std::to_string(count) + ")";
    for (const Node& n : g.blocks[b].nodes) add(summary, ranges, n.module, n.label, n);
  }
  for (const Node& n : g.final_nodes) add(summary, "", n.module, n.label, n);
  s.blocks.push_back(std::move(summary));

  Table all{"Every node, layer by layer",
            {"#", "module", "type", "output shape", "parameters"},
            {},
            {true, false, false, true, true},
            false,
            {}};
  size_t index = 0;
  auto node = [&](const std::string& module, const std::string& label, const Node& n) {
    all.rows.push_back({{Text(std::to_string(index++))},
                        {Code(module)},
                        {Text(label)},
                        {Text(shape(n))},
                        {Text(G(NodeParams(n).value()))}});
  };
  for (const Node& n : g.embeddings) node(n.module, n.label, n);
  for (size_t l = 0; l < g.layers.size(); ++l) {
    const LayerSpec& spec = g.layers[l];
    if (spec.block < 0 || static_cast<size_t>(spec.block) >= g.blocks.size()) continue;
    for (const Node& n : g.blocks[static_cast<size_t>(spec.block)].nodes) {
      std::string label = n.label;
      if (n.kind == NodeKind::kAttention && spec.window) {
        label += ", sliding window " + G(static_cast<uint64_t>(spec.window));
      }
      node(Module(n.module, l), label, n);
    }
  }
  for (const Node& n : g.final_nodes) node(n.module, n.label, n);
  all.folded = "All " + G(all.rows.size()) + " nodes, layer by layer";
  s.blocks.push_back(std::move(all));
  if (!g.extra_nodes.empty()) {
    s.blocks.push_back(Paragraph{
        {Text(G(g.extra_nodes.size()) + " more modules are stored on disk but not loaded.")}});
  }
  return s;
}

std::string LintFix(const std::string& code) {
  static const std::map<std::string, std::string, std::less<>> kFixes = {
      {"heads_not_divisible", "Set num_key_value_heads to a divisor of num_attention_heads."},
      {"head_dim_differs",
       "Check head_dim against hidden_size / num_attention_heads; set it explicitly if the "
       "difference is intended."},
      {"token_id_out_of_vocab",
       "Point bos/eos/pad_token_id at ids below vocab_size, or grow the vocabulary."},
      {"sliding_window_too_large",
       "Lower sliding_window to at most max_position_embeddings, or drop it."},
      {"rope_scaling_legacy", "Rename rope_scaling.type to rope_scaling.rope_type."},
      {"rope_scaling_invalid",
       "Give rope_scaling a known rope_type and every key that type requires, in range."},
      {"tied_head_stored",
       "Drop lm_head.weight from the checkpoint, or set tie_word_embeddings to false."},
      {"untied_head_missing", "Store lm_head.weight, or set tie_word_embeddings to true."},
      {"checkpoint_delta",
       "Make the config describe the checkpoint (sizes, layers, vocabulary) or re-export the "
       "weights from it."},
      {"checkpoint_dtype",
       "Set torch_dtype to the dtype the tensors are stored in, or convert them."},
      {"approximate_architecture",
       "Treat these numbers as approximate; an exact model of this architecture is needed."},
  };
  auto it = kFixes.find(code);
  return it == kFixes.end() ? "See the message." : it->second;
}

Section LintSection(const Estimate& e) {
  Section s{"verifier", "What the verifier says", {}};
  if (e.lints.empty()) {
    s.blocks.push_back(Paragraph{
        {Chip("ok", Tone::kGood), Text("No lint: the config is consistent and agrees with the "
                                       "checkpoint.")}});
    return s;
  }
  Table t{"Lints, with their fixes", {"id", "severity", "finding", "fix"}, {}, {}, true, {}};
  for (const Lint& l : e.lints) {
    const Tone tone = l.severity == LintSeverity::kError     ? Tone::kBad
                      : l.severity == LintSeverity::kWarning ? Tone::kWarn
                                                             : Tone::kNone;
    t.rows.push_back({{Code(l.code)},
                      {Chip(SeverityName(l.severity), tone)},
                      {Text(Clip(l.message, 600))},
                      {Text(LintFix(l.code))}});
  }
  s.blocks.push_back(std::move(t));
  return s;
}

Section CommandsSection(const Estimate& e, const std::vector<std::string>& shard_files,
                        const std::string& base_url) {
  Section s{"commands", "Do this to your own model", {}};
  const std::string knobs = " --seq " + std::to_string(e.workload.seq) + " --batch " +
                            std::to_string(e.workload.batch) + " --context " +
                            std::to_string(e.workload.context) + " --lora-rank " +
                            std::to_string(e.assumptions.lora_rank);
  std::string cli = "hubwatch estimate config.json" + knobs;
  size_t shard = 0;
  for (const std::string& f : shard_files) {
    cli += " \\\n    --safetensors-header " +
           (PlainFileName(f) ? f : "shard-" + std::to_string(++shard) + ".safetensors");
  }
  s.blocks.push_back(Paragraph{
      {Text("The same numbers from a checkout of the model (the headers are read, not the "
            "weights):")}});
  s.blocks.push_back(Preformatted{cli + "\n", {}});
  s.blocks.push_back(Paragraph{{Text("Or from this server, posting the config.json:")}});
  s.blocks.push_back(Preformatted{
      "curl -X POST --data-binary @config.json \\\n    '" + base_url + "/api/v1/plan?seq=" +
          std::to_string(e.workload.seq) + "&batch=" + std::to_string(e.workload.batch) +
          "&context=" + std::to_string(e.workload.context) +
          "&lora_rank=" + std::to_string(e.assumptions.lora_rank) + "'\n",
      {}});
  s.blocks.push_back(Paragraph{{Text("Or paste it into "), Link("the form", "/plan"), Text(".")}});
  return s;
}

}  // namespace hubwatch::page
