#include "daemon/page/list_pages.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "daemon/page/calibration_page.h"
#include "daemon/page/href.h"
#include "daemon/page/sections.h"
#include "estimator/base/text.h"
#include "estimator/memory.h"
#include "tracker/advisory/time_text.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::page {
namespace {

using nlohmann::json;

constexpr std::string_view kFromTensors = "checkpoint_tensors";

double Number0(const json& j) { return j.is_number() ? j.get<double>() : 0; }

// Batch-1 totals from a stored estimate (hubwatch.estimate/1), read without trusting its shape.
void Figures(const json& e, IndexRow& row) {
  if (!e.is_object() || !e.contains("params") || !e["params"].is_object()) return;
  const json& total = e["params"].value("total", json());
  if (!total.is_number_unsigned()) return;
  row.params = total.get<uint64_t>();
  if (e.contains("model") && e["model"].is_object()) {
    const json& model = e["model"];
    if (model.value("source", json()).is_string()) row.source = model["source"].get<std::string>();
    if (model.value("model_type", json()).is_string()) {
      row.family = model["model_type"].get<std::string>();
    }
    if (row.family.empty()) row.family = kNoModelTypeFamily;
  }
  const json& memory = e.value("memory", json());
  if (!memory.is_array()) return;
  for (const json& plan : memory) {
    if (!plan.is_object()) continue;
    const std::string mode =
        plan.value("mode", json()).is_string() ? plan["mode"].get<std::string>() : "";
    const double batch1 = Number0(plan.value("fixed_bytes", json())) +
                          Number0(plan.value("per_sample_bytes", json()));
    if (mode == "full_finetune") row.full_finetune_bytes = batch1;
    if (mode == "lora") row.lora_bytes = batch1;
    if (mode != "serve" || !plan.value("components", json()).is_array()) continue;
    for (const json& c : plan["components"]) {
      if (c.is_object() && c.value("name", json()) == std::string(ItemName(MemoryItem::kWeights))) {
        row.serve_weight_bytes = Number0(c.value("bytes", json()));
      }
    }
  }
}

std::string When(int64_t unix_seconds) {
  return unix_seconds > 0 ? advisory::Rfc3339(unix_seconds).substr(0, 10) : "";
}

Spans RepoLink(const std::string& repo) {
  const std::string path = ModelPath(repo);
  return {path.empty() ? Text(repo) : Link(repo, path)};
}

std::string KindText(diff::ChangeKind k) {
  std::string s(diff::KindName(k));
  for (char& c : s) c = c == '_' ? ' ' : c;
  return s;
}

}  // namespace

Result<std::vector<IndexRow>> LoadIndex(store::Store& store) {
  Result<std::vector<store::RepoRecord>> repos = store.repos().ListRepos();
  if (!repos.ok()) return repos.error();
  std::vector<IndexRow> rows;
  for (const store::RepoRecord& r : *repos) {
    IndexRow row{r.id, "unknown", std::string(store::RepoStateName(r.state)), {}, "", 0, 0, 0, {}};
    Result<std::optional<store::EstimateRecord>> e = store.revisions().LatestEstimate(r.id);
    if (!e.ok()) return e.error();
    if (e->has_value()) Figures((*e)->estimate, row);
    Result<std::vector<store::ChangeRecord>> last =
        store.revisions().BrowseChanges({.repo = r.id, .limit = 1});
    if (!last.ok()) return last.error();
    if (!last->empty()) row.last_change = std::move(last->front());
    rows.push_back(std::move(row));
  }
  return rows;
}

Document BuildIndexPage(const std::vector<IndexRow>& rows) {
  Document doc;
  doc.title = "Tracked models · hubwatch";
  doc.h1 = "Tracked models: GPU memory to fine-tune";
  doc.alternates = {{"application/json", "/index.json"}};
  doc.lead.push_back(Paragraph{
      {Text(Grouped(rows.size()) + " models, grouped by family. Each links to its page: exact "
                                   "size, what fits on which card, and every revision. "),
       Link("Paste a model instead", "/plan"), Text(" · "), Link("All tracked changes", "/changes"),
       Text(" · "), Link("JSON", "/index.json")}});
  std::map<std::string, std::vector<const IndexRow*>> families;
  for (const IndexRow& r : rows) families[r.family].push_back(&r);
  for (const auto& [family, members] : families) {
    Section s{"family-" + Anchor(family), family, {}};
    Table t{"Models of the " + family + " family",
            {"model", "parameters", "full fine-tune", "LoRA r=16", "serve", "state", "last change"},
            {},
            {false, true, true, true, true, false, false},
            true,
            {}};
    for (const IndexRow* r : members) {
      auto gb = [&](double b) { return Spans{Text(r->params ? Gb(b) : "—")}; };
      Spans last;
      if (r->last_change) {
        const store::ChangeRecord& c = *r->last_change;
        last = {Text(KindText(c.change.kind) + " "),
                Chip(std::string(diff::ImpactName(c.change.impact)), ImpactTone(c.change.impact)),
                Text(" " + When(c.created_at))};
      } else {
        last = {Text("none yet")};
      }
      const bool from_tensors = r->source == kFromTensors;
      t.rows.push_back({RepoLink(r->repo),
                        {Text(r->params ? Grouped(*r->params) + (from_tensors ? " *" : "") : "—")},
                        gb(r->full_finetune_bytes),
                        gb(r->lora_bytes),
                        gb(r->serve_weight_bytes),
                        {Chip(r->state, r->state == "ok" ? Tone::kGood : Tone::kWarn)},
                        std::move(last)});
    }
    s.blocks.push_back(std::move(t));
    if (std::any_of(members.begin(), members.end(),
                    [](const IndexRow* r) { return r->source == kFromTensors; })) {
      s.blocks.push_back(Paragraph{
          {Text("* from the checkpoint's tensors: structure not modelled (exact counts, "
                "approximate activations).")}});
    }
    doc.sections.push_back(std::move(s));
  }
  if (rows.empty()) {
    doc.sections.push_back({"none",
                            "No model yet",
                            {Paragraph{{Text("No repo is tracked: add one to the configuration's "
                                             "repos, or POST /api/v1/repos.")}}}});
  }
  return doc;
}

json IndexJson(const std::vector<IndexRow>& rows) {
  json list = json::array();
  for (const IndexRow& r : rows) {
    json j = {
        {"repo", r.repo}, {"family", r.family}, {"state", r.state}, {"url", ModelPath(r.repo)}};
    if (r.params) {
      j["params"] = *r.params;
      j["estimate_source"] = r.source;
      j["full_finetune_gb"] = r.full_finetune_bytes / 1e9;
      j["lora_gb"] = r.lora_bytes / 1e9;
      j["serve_gb"] = r.serve_weight_bytes / 1e9;
    } else {
      j["params"] = nullptr;
    }
    if (r.last_change) {
      const store::ChangeRecord& c = *r.last_change;
      j["last_change"] = {
          {"kind", diff::KindName(c.change.kind)},
          {"impact", diff::ImpactName(c.change.impact)},
          {"revision", c.sha},
          {"summary", c.change.summary},
          {"at", c.created_at > 0 ? json(advisory::Rfc3339(c.created_at)) : json()}};
    } else {
      j["last_change"] = nullptr;
    }
    list.push_back(std::move(j));
  }
  // /calibration's figures in numbers: how the memory estimates compare with measured runs.
  const CalibrationSummary& c = Published().summary;
  json calibration = {{"url", "/calibration"},
                      {"runs_estimated", c.cases},
                      {"runs_skipped", c.skipped},
                      {"median_abs_error_pct", c.median_abs_error_pct},
                      {"worst_abs_error_pct", c.worst_abs_error_pct},
                      {"wrong_verdicts", c.wrong_verdicts}};
  return {{"schema", "hubwatch.index/1"},
          {"models", std::move(list)},
          {"calibration", std::move(calibration)}};
}

Document BuildChangesPage(const ChangesPage& page) {
  const store::ChangeBrowse& f = page.filter;
  Document doc;
  doc.title = "Tracked changes · hubwatch";
  doc.h1 = "Tracked changes";
  const std::pair<const char*, const std::string*> asked[] = {
      {"repo", &f.repo}, {"kind", &f.kind}, {"impact", &f.impact}, {"since", &page.since}};
  std::string filters;
  for (const auto& [name, value] : asked) {
    if (!value->empty()) filters += std::string(filters.empty() ? "" : ", ") + name + " " + *value;
  }
  doc.lead.push_back(
      Paragraph{{Text("Every change hubwatch found upstream, newest first, with the day it was "
                      "committed" +
                      (filters.empty() ? std::string(".") : "; only " + filters + ".") + " "),
                 Link("All changes", "/changes")}});
  std::vector<std::string> kinds;
  for (int i = 0; i <= static_cast<int>(diff::ChangeKind::kError); ++i) {
    kinds.emplace_back(diff::KindName(static_cast<diff::ChangeKind>(i)));
  }
  doc.lead.push_back(FilterForm{
      "/changes",
      {{"repo", "Model", f.repo, {}, "google/gemma-2-9b-it"},
       {"kind", "Kind", f.kind, kinds, ""},
       {"impact", "Impact", f.impact, {"cosmetic", "behavioral", "breaking"}, ""},
       {"since", "Since", page.since, {}, "a revision or 2024-06-01"}}});
  Section s{"changes", "Changes", {}};
  Table t{"Changes, newest first",
          {"committed", "model", "revision", "kind", "impact", "summary"},
          {},
          {},
          false,
          {}};
  for (const store::ChangeRecord& c : page.changes) {
    const std::string path = ModelPath(c.repo);
    const std::string sha = c.sha.substr(0, 7);
    t.rows.push_back(
        {{Text(c.committed_at.size() >= 10 ? c.committed_at.substr(0, 10) : When(c.created_at))},
         RepoLink(c.repo),
         {!path.empty() && hub::IsCommitId(c.sha)
              ? Link(sha, path + "?revision=" + c.sha + "#rev-" + sha)
              : Code(sha)},
         {Text(KindText(c.change.kind))},
         {Chip(std::string(diff::ImpactName(c.change.impact)), ImpactTone(c.change.impact))},
         {Text(Clip(c.change.summary, 300))}});
  }
  if (t.rows.empty()) {
    s.blocks.push_back(Paragraph{{Text("No change matches.")}});
  } else {
    s.blocks.push_back(std::move(t));
  }
  if (page.next_before > 0) {
    std::string next = "/changes?before=" + std::to_string(page.next_before);
    if (!f.repo.empty()) next += "&repo=" + QueryEscape(f.repo);
    if (!f.kind.empty()) next += "&kind=" + QueryEscape(f.kind);
    if (!f.impact.empty()) next += "&impact=" + QueryEscape(f.impact);
    if (!page.since.empty()) next += "&since=" + QueryEscape(page.since);
    s.blocks.push_back(Paragraph{{Link("Older changes", next)}});
  }
  doc.sections.push_back(std::move(s));
  return doc;
}

}  // namespace hubwatch::page
