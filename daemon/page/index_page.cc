#include "daemon/page/index_page.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/page/calibration_page.h"
#include "daemon/page/href.h"
#include "daemon/page/list_cells.h"
#include "daemon/page/sections.h"
#include "estimator/base/text.h"
#include "estimator/memory.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::page {
namespace {

using nlohmann::json;

constexpr std::string_view kFromTensors = "checkpoint_tensors";

double Number0(const json& j) { return j.is_number() ? j.get<double>() : 0; }

// Batch-1 totals from a stored estimate (hubwatch.estimate/1), read without trusting its shape.
// The family is the store's (repos.family), written from the same estimate.
void Figures(const json& e, IndexRow& row) {
  if (!e.is_object() || !e.contains("params") || !e["params"].is_object()) return;
  const json& total = e["params"].value("total", json());
  if (!total.is_number_unsigned()) return;
  row.params = total.get<uint64_t>();
  if (e.contains("model") && e["model"].is_object()) {
    const json& model = e["model"];
    if (model.value("source", json()).is_string()) row.source = model["source"].get<std::string>();
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

Result<std::optional<IndexRow>> LoadRow(store::Store& store, const store::RepoKey& key) {
  Result<std::optional<store::RepoRecord>> r = store.repos().GetRepo(key.id);
  if (!r.ok()) return r.error();
  if (!r->has_value()) return std::optional<IndexRow>();  // removed since the page's query
  // A repo a follow rule untracked keeps its history and its row, marked so.
  const std::string state =
      (*r)->tracked ? std::string(store::RepoStateName((*r)->state)) : "untracked";
  IndexRow row{key.id, key.family, state, {}, "", 0, 0, 0, {}};
  Result<std::optional<store::EstimateRecord>> e = store.revisions().LatestEstimate(key.id);
  if (!e.ok()) return e.error();
  if (e->has_value()) Figures((*e)->estimate, row);
  Result<std::vector<store::ChangeRecord>> last =
      store.revisions().BrowseChanges({.repo = key.id, .limit = 1});
  if (!last.ok()) return last.error();
  if (!last->empty()) row.last_change = std::move(last->front());
  return std::optional<IndexRow>(std::move(row));
}

// The page's subject in words: "the gemma2 family", "models matching name llama, state ok".
std::string Asked(const IndexQuery& q) {
  const store::RepoSearch& s = q.search;
  const std::pair<const char*, const std::string*> asked[] = {{"name", &s.name},
                                                              {"owner", &s.owner},
                                                              {"family", &s.family},
                                                              {"state", &s.state},
                                                              {"changed since", &q.changed_since}};
  std::string out;
  for (const auto& [name, value] : asked) {
    if (!value->empty()) out += std::string(out.empty() ? "" : ", ") + name + " " + *value;
  }
  return out;
}

// Only a family asked: the page is that family's.
bool FamilyOnly(const store::RepoSearch& s) {
  return !s.family.empty() && s.name.empty() && s.owner.empty() && s.state.empty() &&
         s.changed_since == 0;
}

Table ModelTable(const IndexPage& page, bool with_family) {
  Table t{"Models, by id",
          {"model", "parameters", "full fine-tune", "LoRA r=16", "serve", "state", "last change"},
          {},
          {false, true, true, true, true, false, false},
          true,
          {}};
  if (with_family) t.header.insert(t.header.begin() + 1, "family");
  if (with_family) t.numeric.insert(t.numeric.begin() + 1, false);
  for (const IndexRow& r : page.rows) {
    auto gb = [&](double b) { return Spans{Text(r.params ? Gb(b) : "—")}; };
    Spans last = {Text("none yet")};
    if (r.last_change) {
      const store::ChangeRecord& c = *r.last_change;
      last = {Text(KindText(c.change.kind) + " "),
              Chip(std::string(diff::ImpactName(c.change.impact)), ImpactTone(c.change.impact)),
              Text(" " + When(c.created_at))};
    }
    const bool from_tensors = r.source == kFromTensors;
    std::vector<Spans> row{RepoLink(r.repo),
                           {Text(r.params ? Grouped(*r.params) + (from_tensors ? " *" : "") : "—")},
                           gb(r.full_finetune_bytes),
                           gb(r.lora_bytes),
                           gb(r.serve_weight_bytes),
                           {Chip(r.state, r.state == "ok" ? Tone::kGood : Tone::kWarn)},
                           std::move(last)};
    if (with_family) {
      row.insert(row.begin() + 1, Spans{Link(r.family, "/?family=" + QueryEscape(r.family))});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

FilterForm SearchForm(const IndexQuery& q) {
  std::vector<std::string> states;
  for (store::RepoState s :
       {store::RepoState::kOk, store::RepoState::kGated, store::RepoState::kRenamed,
        store::RepoState::kDeleted, store::RepoState::kDisabled, store::RepoState::kErroring}) {
    states.emplace_back(store::RepoStateName(s));
  }
  const store::RepoSearch& s = q.search;
  return FilterForm{"/",
                    {{"name", "Name contains", s.name, {}, "gemma"},
                     {"owner", "Owner", s.owner, {}, "google"},
                     {"family", "Family", s.family, {}, "llama"},
                     {"state", "State", s.state, states, ""},
                     {"changed_since", "Changed since", q.changed_since, {}, "2024-06-01"}}};
}

}  // namespace

bool HasFilter(const store::RepoSearch& s) {
  return !s.name.empty() || !s.owner.empty() || !s.family.empty() || !s.state.empty() ||
         s.changed_since > 0;
}

Result<IndexPage> LoadIndexPage(store::Store& store, IndexQuery query, bool land) {
  IndexPage page;
  Result<std::vector<store::FamilyCount>> families =
      store.repo_pages().Families("", kIndexFamilies + 1);
  if (!families.ok()) return families.error();
  page.families = std::move(families).value();
  if (static_cast<int64_t>(page.families.size()) > kIndexFamilies) {
    page.families.resize(kIndexFamilies);
    page.more_families = true;
  }
  Result<int64_t> total = store.repo_pages().Count();
  if (!total.ok()) return total.error();
  page.total = *total;
  // A person landing on / is shown the family with the most models: the page where the model
  // they came for most likely is, and a full one; every other family is one link away in the
  // families table, and any model one search away. (index.json lists every repo instead.)
  if (land && !HasFilter(query.search) && !page.families.empty()) {
    query.search.family =
        std::max_element(page.families.begin(), page.families.end(),
                         [](const auto& a, const auto& b) { return a.repos < b.repos; })
            ->family;
  }
  store::RepoSearch search = query.search;
  search.limit = query.search.limit + 1;  // one more: is there a page beyond?
  Result<std::vector<store::RepoKey>> keys = store.repo_pages().Find(search);
  if (!keys.ok()) return keys.error();
  const bool more = static_cast<int64_t>(keys->size()) > query.search.limit;
  const bool backward = !query.search.before.empty();
  if (more) keys->erase(backward ? keys->begin() : keys->end() - 1);
  for (const store::RepoKey& key : *keys) {
    Result<std::optional<IndexRow>> row = LoadRow(store, key);
    if (!row.ok()) return row.error();
    if (row->has_value()) page.rows.push_back(std::move(**row));
  }
  if (!keys->empty()) {
    if (backward || more) page.next_after = keys->back().id;
    if (backward ? more : !query.search.after.empty()) page.previous_before = keys->front().id;
  }
  page.query = std::move(query);
  return page;
}

std::string IndexHref(const std::string& base, const IndexQuery& q, const std::string& after,
                      const std::string& before) {
  const store::RepoSearch& s = q.search;
  const std::pair<const char*, const std::string*> params[] = {{"name", &s.name},
                                                               {"owner", &s.owner},
                                                               {"family", &s.family},
                                                               {"state", &s.state},
                                                               {"changed_since", &q.changed_since},
                                                               {"after", &after},
                                                               {"before", &before}};
  std::string out;
  for (const auto& [name, value] : params) {
    if (value->empty() || (name == std::string_view("after") && !before.empty())) continue;
    out += (out.empty() ? "?" : "&") + std::string(name) + "=" + QueryEscape(*value);
  }
  if (s.limit != kIndexPageRows) {
    out += (out.empty() ? "?limit=" : "&limit=") + std::to_string(s.limit);
  }
  return base + out;
}

Document BuildIndexPage(const IndexPage& page) {
  Document doc;
  doc.title = "Tracked models · hubwatch";
  doc.h1 = "Tracked models: GPU memory to fine-tune";
  doc.alternates = {{"application/json", IndexHref("/index.json", page.query, "", "")}};
  doc.lead.push_back(Paragraph{
      {Text(Grouped(static_cast<uint64_t>(page.total)) + " models in " +
            Grouped(page.families.size()) + (page.more_families ? "+" : "") +
            " families. Each links to its page: exact size, what fits on which card, and every "
            "revision. "),
       Link("Paste a model instead", "/plan"), Text(" · "), Link("All tracked changes", "/changes"),
       Text(" · "), Link("JSON", "/index.json")}});
  doc.lead.push_back(SearchForm(page.query));

  Section families{"families", "Families", {}};
  Table ft{"Families, by name", {"family", "models"}, {}, {false, true}, true, {}};
  for (const store::FamilyCount& f : page.families) {
    ft.rows.push_back({{Link(f.family, "/?family=" + QueryEscape(f.family))},
                       {Text(Grouped(static_cast<uint64_t>(f.repos)))}});
  }
  if (!ft.rows.empty()) families.blocks.push_back(std::move(ft));
  if (page.more_families) {
    families.blocks.push_back(
        Paragraph{{Text("The first " + Grouped(kIndexFamilies) +
                        " families by name; the search form's family field finds any other.")}});
  }

  const store::RepoSearch& s = page.query.search;
  const bool family_page = FamilyOnly(s);
  Section models{family_page ? "family-" + Anchor(s.family) : "models",
                 family_page ? s.family : "Models matching " + Asked(page.query),
                 {}};
  if (page.rows.empty()) {
    models.blocks.push_back(Paragraph{
        {Text(page.total == 0 ? "No repo is tracked: add one to the configuration's repos, or "
                                "POST /api/v1/repos."
                              : "No model matches.")}});
  } else {
    models.blocks.push_back(ModelTable(page, !family_page));
  }
  if (std::any_of(page.rows.begin(), page.rows.end(),
                  [](const IndexRow& r) { return r.source == kFromTensors; })) {
    models.blocks.push_back(
        Paragraph{{Text("* from the checkpoint's tensors: structure not modelled (exact counts, "
                        "approximate activations).")}});
  }
  Spans pager;
  if (!page.previous_before.empty()) {
    pager.push_back(Link("Previous page", IndexHref("/", page.query, "", page.previous_before)));
  }
  if (!page.next_after.empty()) {
    if (!pager.empty()) pager.push_back(Text(" · "));
    pager.push_back(Link("Next page", IndexHref("/", page.query, page.next_after, "")));
  }
  if (!pager.empty()) models.blocks.push_back(Paragraph{std::move(pager)});
  doc.sections.push_back(std::move(models));
  doc.sections.push_back(std::move(families));
  return doc;
}

json IndexJson(const IndexPage& page) {
  json list = json::array();
  for (const IndexRow& r : page.rows) {
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
  json families = json::array();
  for (const store::FamilyCount& f : page.families) {
    families.push_back({{"family", f.family},
                        {"repos", f.repos},
                        {"url", "/index.json?family=" + QueryEscape(f.family)}});
  }
  // /calibration's figures in numbers: how the memory estimates compare with measured runs.
  const CalibrationSummary& c = Published().summary;
  json calibration = {{"url", "/calibration"},
                      {"runs_estimated", c.cases},
                      {"runs_skipped", c.skipped},
                      {"median_abs_error_pct", c.median_abs_error_pct},
                      {"worst_abs_error_pct", c.worst_abs_error_pct},
                      {"wrong_verdicts", c.wrong_verdicts}};
  const auto href = [&](const std::string& after, const std::string& before) {
    return after.empty() && before.empty()
               ? json()
               : json(IndexHref("/index.json", page.query, after, before));
  };
  return {{"schema", "hubwatch.index/2"},
          {"repos_tracked", page.total},
          {"families", std::move(families)},
          {"families_truncated", page.more_families},
          {"models", std::move(list)},
          {"next_after", page.next_after.empty() ? json() : json(page.next_after)},
          {"next", href(page.next_after, "")},
          {"previous", href("", page.previous_before)},
          {"calibration", std::move(calibration)}};
}

}  // namespace hubwatch::page
