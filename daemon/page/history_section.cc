// The model page's "What changed upstream": every stored revision, newest first, with its
// changes and their evidence, and the links to the same history as data.

#include <map>

#include "daemon/page/href.h"
#include "daemon/page/sections.h"
#include "estimator/base/text.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::page {
namespace {

constexpr size_t kMaxTitleBytes = 300;
constexpr size_t kTimelineRevisions = 12;  // bars in the timeline
constexpr size_t kMaxMessageBytes = 2000;

std::string KindTitle(diff::ChangeKind kind) {
  std::string name(diff::KindName(kind));
  for (char& c : name) c = c == '_' ? ' ' : c;
  return name;
}

std::string Date(const store::RevisionRecord& r) {
  return r.authored_at.size() >= 10 ? r.authored_at.substr(0, 10) : r.authored_at;
}

}  // namespace

Tone ImpactTone(diff::Impact impact) {
  switch (impact) {
    case diff::Impact::kCosmetic:
      return Tone::kCosmetic;
    case diff::Impact::kBehavioral:
      return Tone::kBehavioral;
    case diff::Impact::kBreaking:
      return Tone::kBreaking;
  }
  return Tone::kNone;
}

std::vector<Block> ChangeLead(const std::vector<RevisionHistory>& history,
                              const std::vector<store::PinStatus>& pins) {
  std::vector<Block> out;
  const RevisionHistory* latest = nullptr;
  const store::ChangeRecord* lead = nullptr;
  for (const RevisionHistory& h : history) {
    for (const store::ChangeRecord& c : h.changes) {
      if (c.change.impact == diff::Impact::kCosmetic) continue;
      if (!lead || static_cast<int>(c.change.impact) > static_cast<int>(lead->change.impact)) {
        lead = &c;
      }
    }
    if (lead) {
      latest = &h;
      break;
    }
  }
  if (!latest) {
    out.push_back(Paragraph{{Strong("Latest change: "), Text("none recorded yet")}});
  } else {
    const std::string short_sha = latest->revision.sha.substr(0, 7);
    Spans line = {
        Strong("Latest change: "),
        Chip(std::string(diff::ImpactName(lead->change.impact)), ImpactTone(lead->change.impact)),
        Text(" " + KindTitle(lead->change.kind) + ": " +
             Clip(lead->change.summary, kMaxTitleBytes) + " — "),
        Link(short_sha, "#rev-" + short_sha), Text(", committed " + Date(latest->revision))};
    if (latest->changes.size() > 1) {
      line.push_back(Text(" (" + std::to_string(latest->changes.size() - 1) +
                          " more change(s) in that revision)"));
    }
    out.push_back(Paragraph{std::move(line)});
  }
  for (const store::PinStatus& p : pins) {
    Spans line = {Strong("Pin "), Code(p.pin.substr(0, 12)), Text(": ")};
    if (p.sha.empty()) {
      line.push_back(Chip("unknown", Tone::kWarn));
      line.push_back(Text(" " + Clip(p.problem, 200)));
    } else if (p.advisories == 0) {
      line.push_back(Chip(p.current() ? "current" : "unaffected", Tone::kGood));
      line.push_back(Text(p.current() ? " the newest revision"
                                      : " no advisory affects it; the newest is " +
                                            p.newest.substr(0, 7)));
    } else {
      line.push_back(
          Chip(std::to_string(p.advisories) +
                   (p.advisories == 1 ? " advisory affects it" : " advisories affect it"),
               Tone::kWarn));
      line.push_back(Text(" — revision " + p.newest.substr(0, 7) + " takes every fix"));
    }
    out.push_back(Paragraph{std::move(line)});
  }
  return out;
}

Section HistorySection(const std::vector<RevisionHistory>& history, const std::string& repo,
                       const std::string& shown) {
  Section s{"history", "What changed upstream", {}};
  const std::string api = "/api/v1/repos/" + repo;
  s.blocks.push_back(
      Paragraph{{Link("Revision history (JSON)", api + "/revisions"), Text(" · "),
                 Link("badge JSON", api + "/badge"), Text(" · "),
                 Link("OSV advisories", "/api/v1/advisories?repo=" + QueryEscape(repo)),
                 Text(" · "), Link("all tracked changes", "/changes?repo=" + QueryEscape(repo))}});
  s.blocks.push_back(Image{api + "/badge.svg", "hubwatch badge for " + repo});
  if (history.empty()) {
    s.blocks.push_back(Paragraph{{Text("No revision of this repo is stored yet.")}});
    return s;
  }
  s.blocks.push_back(
      Paragraph{{Text(Grouped(history.size()) + " stored revisions, newest first.")}});
  // The timeline: the newest revisions that changed anything, their changes by impact.
  BarChart timeline;
  timeline.caption = "The newest revisions with changes, each with its changes by impact";
  timeline.unit = "change(s)";
  timeline.categories = {"breaking", "behavioral", "cosmetic"};
  timeline.tones = {Tone::kBreaking, Tone::kBehavioral, Tone::kCosmetic};
  for (const RevisionHistory& h : history) {
    if (h.changes.empty()) continue;
    if (timeline.bars.size() == kTimelineRevisions) break;
    BarChart::Bar bar{Date(h.revision) + " " + h.revision.sha.substr(0, 7), {0, 0, 0}};
    for (const store::ChangeRecord& c : h.changes) {
      bar.values[c.change.impact == diff::Impact::kBreaking     ? 0
                 : c.change.impact == diff::Impact::kBehavioral ? 1
                                                                : 2] += 1;
    }
    timeline.bars.push_back(std::move(bar));
  }
  if (!timeline.bars.empty()) s.blocks.push_back(std::move(timeline));
  const std::string page = ModelPath(repo);
  for (const RevisionHistory& h : history) {
    const store::RevisionRecord& r = h.revision;
    const std::string short_sha = r.sha.substr(0, 7);
    Spans head = {Text(Date(r) + " ")};
    const std::string commit = HubCommitUrl(repo, r.sha);
    head.push_back(commit.empty() ? Code(short_sha) : Link(short_sha, commit));
    head.push_back(Text(" " + Clip(r.title.empty() ? "(no title)" : r.title, kMaxTitleBytes)));
    s.blocks.push_back(Heading{3, std::move(head), "rev-" + short_sha});

    std::map<diff::Impact, int> counts;
    for (const store::ChangeRecord& c : h.changes) ++counts[c.change.impact];
    Spans meta;
    for (auto impact :
         {diff::Impact::kBreaking, diff::Impact::kBehavioral, diff::Impact::kCosmetic}) {
      if (counts[impact] == 0) continue;
      meta.push_back(
          Chip(std::to_string(counts[impact]) + " " + std::string(diff::ImpactName(impact)),
               ImpactTone(impact)));
    }
    if (h.changes.empty()) meta.push_back(Text("No tracked file changed. "));
    std::string authors;
    for (const std::string& a : r.authors) authors += (authors.empty() ? "" : ", ") + Clip(a, 80);
    if (!authors.empty()) meta.push_back(Text(" by " + authors));
    if (!r.refs.empty()) {
      std::string refs;
      for (const std::string& ref : r.refs) refs += (refs.empty() ? "" : ", ") + Clip(ref, 80);
      meta.push_back(Text("; refs: " + refs));
    }
    if (r.rewritten_away) meta.push_back(Text("; rewritten away upstream"));
    meta.push_back(Text(". "));
    if (r.sha == shown) {
      meta.push_back(Strong("This page shows this revision."));
    } else if (!page.empty() && hub::IsCommitId(r.sha)) {
      meta.push_back(Link("Show this revision", page + "?revision=" + r.sha));
    }
    s.blocks.push_back(Paragraph{std::move(meta)});
    if (!r.message.empty()) {
      s.blocks.push_back(Preformatted{Clip(r.message, kMaxMessageBytes), "Commit message"});
    }
    for (const store::ChangeRecord& c : h.changes) {
      s.blocks.push_back(Heading{
          4,
          {Chip(std::string(diff::ImpactName(c.change.impact)), ImpactTone(c.change.impact)),
           Text(KindTitle(c.change.kind) +
                (c.change.path.empty() ? "" : " (" + Clip(c.change.path, 200) + ")") + ": " +
                Clip(c.change.summary, 600))},
          {}});
      for (Block& b : Evidence(c)) s.blocks.push_back(std::move(b));
    }
  }
  return s;
}

}  // namespace hubwatch::page
