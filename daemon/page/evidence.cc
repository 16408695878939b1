// The evidence of one change, from its stored details (whose shape is the diff engine's, and is
// read without trusting it: a missing or mistyped member is skipped): config patch rows,
// tokenizer section summaries, the chat template's unified diff and rendered-prompt diffs, the
// weights' tensor table, estimate deltas; anything else as folded JSON.

#include <cmath>
#include <nlohmann/json.hpp>

#include "daemon/page/sections.h"
#include "estimator/base/text.h"
#include "estimator/format.h"
#include "tracker/diff/json_text.h"

namespace hubwatch::page {
namespace {

using nlohmann::json;

constexpr size_t kMaxValueBytes = 200;
constexpr size_t kMaxDiffBytes = 16 * 1024;
constexpr size_t kMaxRows = 50;

const json& At(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}
std::string Str(const json& j) { return j.is_string() ? j.get<std::string>() : ""; }
std::string Value(const json& j) {
  if (j.is_null()) return "";
  return Clip(
      j.is_string() ? j.get<std::string>() : j.dump(-1, ' ', false, json::error_handler_t::replace),
      kMaxValueBytes);
}

void ConfigOps(const json& ops, std::vector<Block>& out) {
  Table t{
      "Patch: the fields that changed", {"field", "before", "after", "impact"}, {}, {}, true, {}};
  for (const json& op : ops) {
    if (t.rows.size() >= kMaxRows) break;
    t.rows.push_back({{Code(diff::DisplayPointer(Str(At(op, "path"))))},
                      {Code(Value(At(op, "old_value")))},
                      {Code(Value(At(op, "value")))},
                      {Text(Str(At(op, "impact")))}});
  }
  if (!t.rows.empty()) out.push_back(std::move(t));
}

void TokenizerSections(const json& sections, std::vector<Block>& out) {
  BulletList list;
  for (const auto& [name, section] : sections.items()) {
    if (list.items.size() >= kMaxRows) break;
    list.items.push_back(
        {Strong(Clip(name, 120)), Text(": " + Clip(Str(At(section, "summary")), 400)),
         Text(At(section, "impact").is_string() ? " (" + Str(At(section, "impact")) + ")" : "")});
  }
  if (!list.items.empty()) out.push_back(std::move(list));
}

void TemplateDiffs(const json& d, std::vector<Block>& out) {
  const std::string diff = Str(At(d, "unified_diff"));
  if (!diff.empty()) {
    out.push_back(Preformatted{Clip(diff, kMaxDiffBytes), "The template's unified diff"});
  }
  const json& conversations = At(At(d, "rendered"), "conversations");
  if (!conversations.is_array()) return;
  for (const json& c : conversations) {
    const std::string text = Str(At(c, "unified_diff"));
    if (text.empty()) continue;
    out.push_back(Preformatted{Clip(text, kMaxDiffBytes),
                               "Rendered prompt diff: " + Clip(Str(At(c, "conversation")), 120)});
  }
}

void TensorTable(const json& d, std::vector<Block>& out) {
  const json& tensors = At(d, "tensors");
  Table t{"Tensors that changed", {"tensor", "change", "before", "after"}, {}, {}, true, {}};
  for (const char* what : {"added", "removed", "reshaped", "dtype_changed"}) {
    const json& list = At(tensors, what);
    if (!list.is_array()) continue;
    for (const json& item : list) {
      if (t.rows.size() >= kMaxRows) break;
      const bool moved = At(item, "old").is_null() ? false : true;
      const std::string shape = Value(At(item, "shape")) + " " + Str(At(item, "dtype"));
      t.rows.push_back({{Code(Clip(Str(At(item, "name")), 200))},
                        {Text(what)},
                        {Text(moved                            ? Value(At(item, "old"))
                              : std::string(what) == "removed" ? shape
                                                               : "")},
                        {Text(moved                          ? Value(At(item, "new"))
                              : std::string(what) == "added" ? shape
                                                             : "")}});
    }
  }
  if (!t.rows.empty()) out.push_back(std::move(t));
  if (At(d, "scalars_before").is_number() && At(d, "scalars_after").is_number()) {
    const int64_t delta =
        At(d, "scalars_delta").is_number() ? At(d, "scalars_delta").get<int64_t>() : 0;
    out.push_back(Paragraph{
        {Text("Scalars " + Grouped(At(d, "scalars_before").get<uint64_t>()) + " → " +
              Grouped(At(d, "scalars_after").get<uint64_t>()) + " (" + (delta >= 0 ? "+" : "−") +
              Grouped(static_cast<uint64_t>(delta >= 0 ? delta : -delta)) + ")" +
              (At(d, "values_changed") == true ? "; same tensors, new values" : "") + ".")}});
  }
}

// "full fine-tune 166.7 → 168.1 GB" from the estimate change's key figures.
void EstimateDeltas(const json& figures, std::vector<Block>& out) {
  BulletList list;
  for (const auto& [key, moved] : figures.items()) {
    const json& old = At(moved, "old");
    const json& now = At(moved, "new");
    std::string line;
    if (key.starts_with("memory.") && key.ends_with(".batch1_mb")) {
      std::string mode = key.substr(7, key.size() - 7 - 10);
      for (char& c : mode) c = c == '_' ? ' ' : c;
      if (mode == "full finetune") mode = "full fine-tune";
      auto gb = [](const json& v) {
        return v.is_number() ? Number(v.get<double>() / 1000, 1) : std::string("—");
      };
      line = mode + " " + gb(old) + " → " + gb(now) + " GB (batch 1)";
    } else if (key.starts_with("fit.")) {
      continue;  // the card table above says where it fits now
    } else {
      line = key + " " + Value(old) + " → " + Value(now);
    }
    list.items.push_back({Text(line)});
    if (list.items.size() >= kMaxRows) break;
  }
  if (!list.items.empty()) out.push_back(std::move(list));
}

}  // namespace

std::vector<Block> Evidence(const store::ChangeRecord& change) {
  std::vector<Block> out;
  const json& d = change.change.details;
  if (!d.is_object() || d.empty()) return out;
  switch (change.change.kind) {
    case diff::ChangeKind::kConfig:
    case diff::ChangeKind::kGenerationConfig:
    case diff::ChangeKind::kProcessor:
      if (At(d, "ops").is_array()) ConfigOps(At(d, "ops"), out);
      break;
    case diff::ChangeKind::kTokenizer:
      if (At(d, "sections").is_object()) TokenizerSections(At(d, "sections"), out);
      if (At(d, "ops").is_array()) ConfigOps(At(d, "ops"), out);
      break;
    case diff::ChangeKind::kChatTemplate:
      TemplateDiffs(d, out);
      break;
    case diff::ChangeKind::kWeights:
      TensorTable(d, out);
      break;
    case diff::ChangeKind::kEstimate:
      if (At(d, "figures").is_object()) EstimateDeltas(At(d, "figures"), out);
      break;
    default:
      break;
  }
  if (out.empty()) {
    out.push_back(Preformatted{Clip(d.dump(2, ' ', false, json::error_handler_t::replace), 4096),
                               "Details (JSON)"});
  }
  return out;
}

}  // namespace hubwatch::page
