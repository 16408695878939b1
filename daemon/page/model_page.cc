#include "daemon/page/model_page.h"

#include "daemon/page/href.h"
#include "daemon/page/index_page.h"
#include "daemon/page/sections.h"
#include "estimator/base/text.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::page {
namespace {

void AddEstimateSections(Document& doc, const Estimate& e) {
  for (Block& b : Headline(e)) doc.lead.push_back(std::move(b));
  doc.sections.push_back(CheckpointSection(e));
  doc.sections.push_back(CostSection(e));
  doc.sections.push_back(MemorySection(e));
  doc.sections.push_back(StructureSection(e));
  doc.sections.push_back(LintSection(e));
}

// What the Hub says of the repo beside its files: the download count (when the Hub gave one),
// likes, and the tags, as of when hubwatch last read them. Nothing when never read.
void AddHubInfo(Document& doc, const store::HubInfo& info) {
  if (info.fetched_at == 0) return;
  const std::string as_of = " (as of " + advisory::Rfc3339(info.fetched_at).substr(0, 10) + ")";
  Spans counts;
  if (info.downloads) {
    counts.push_back(Strong(Grouped(static_cast<uint64_t>(*info.downloads))));
    counts.push_back(Text(" downloads on the Hub in the last 30 days"));
  }
  if (info.likes) {
    counts.push_back(Text(counts.empty() ? "" : ", "));
    counts.push_back(Strong(Grouped(static_cast<uint64_t>(*info.likes))));
    counts.push_back(Text(*info.likes == 1 ? " like" : " likes"));
  }
  if (!counts.empty()) {
    counts.push_back(Text(as_of + "."));
    doc.lead.push_back(Paragraph{std::move(counts)});
  }
  if (info.tags.empty()) return;
  Spans tags = {Text("Tags on the Hub: ")};
  for (const std::string& tag : info.tags) {
    if (tags.size() > 1) tags.push_back(Text(" "));
    tags.push_back(Code(Clip(tag, store::kMaxHubTagBytes)));
  }
  doc.lead.push_back(Paragraph{std::move(tags)});
}

}  // namespace

Document BuildModelPage(const ModelPageInput& in) {
  const std::string& repo = in.repo->id;
  const std::string name = repo.substr(repo.find('/') + 1);
  const std::string path = ModelPath(repo);
  const Estimate* e = in.estimate->estimate ? &*in.estimate->estimate : nullptr;
  const std::string family = !e                            ? "unknown"
                             : e->graph.model_type.empty() ? kNoModelTypeFamily
                                                           : e->graph.model_type;
  Document doc;
  doc.title = name + ": GPU memory to fine-tune · hubwatch";
  doc.h1 = name + ": GPU memory to fine-tune";
  doc.breadcrumb = {Link("Models", "/"), Text(" / "),
                    Link(family, "/?family=" + QueryEscape(family) + "#family-" + Anchor(family))};
  doc.alternates = {
      {"text/markdown", path + ".md" + (in.sha.empty() ? "" : "?revision=" + in.sha)}};
  Spans about = {Text(repo + " "),
                 Chip(std::string(store::RepoStateName(in.repo->state)),
                      in.repo->state == store::RepoState::kOk ? Tone::kGood : Tone::kWarn)};
  if (!in.sha.empty()) {
    const std::string commit = HubCommitUrl(repo, in.sha);
    about.push_back(Text(" at revision "));
    about.push_back(commit.empty() ? Code(in.sha.substr(0, 12))
                                   : Link(in.sha.substr(0, 12), commit));
  }
  const std::string hub = HubRepoUrl(repo);
  if (!hub.empty()) {
    about.push_back(Text(" · "));
    about.push_back(Link("on the Hub", hub));
  }
  about.push_back(Text(" · "));
  about.push_back(Link("Markdown", doc.alternates.front().second));
  doc.lead.push_back(Paragraph{std::move(about)});
  // Led by change: what changed last and what it means for the pins, then the history.
  for (Block& b : ChangeLead(*in.history, in.pins)) doc.lead.push_back(std::move(b));
  doc.sections.push_back(HistorySection(*in.history, repo, in.sha));
  if (e) {
    AddEstimateSections(doc, *e);
  } else {
    doc.lead.push_back(
        Paragraph{{Strong("No estimate: "),
                   Text(Clip(in.estimate->unavailable.empty() ? "no revision is stored yet"
                                                              : in.estimate->unavailable,
                             600))}});
  }
  AddHubInfo(doc, in.repo->hub_info);
  if (e) doc.sections.push_back(CommandsSection(*e, in.estimate->shard_files, in.base_url));
  return doc;
}

Document BuildPlanPage(const PlanForm& form, const Estimate* estimate,
                       const std::string& base_url) {
  Document doc;
  doc.title = "Paste a model instead · hubwatch";
  doc.h1 = estimate ? "Your model: GPU memory to fine-tune" : "Paste a model instead";
  doc.breadcrumb = {Link("Models", "/"), Text(" / "), Text("Paste a model")};
  if (estimate) AddEstimateSections(doc, *estimate);
  if (!estimate) {
    doc.lead.push_back(Paragraph{
        {Text("Paste a model's config.json to see what it takes to fine-tune and serve it: the "
              "same page as a tracked model, without the upstream history. Nothing is stored. "
              "For an architecture hubwatch does not model, paste a checkpoint's safetensors "
              "header instead, or both as {\"config\": ..., \"safetensors_headers\": [...]}.")}});
  }
  Section s{
      "paste", estimate ? "Paste another model" : "Your config.json or safetensors header", {}};
  s.blocks.push_back(form);
  if (estimate) doc.sections.push_back(CommandsSection(*estimate, {}, base_url));
  doc.sections.push_back(std::move(s));
  return doc;
}

}  // namespace hubwatch::page
