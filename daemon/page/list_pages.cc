#include "daemon/page/list_pages.h"

#include <charconv>

#include "daemon/page/href.h"
#include "daemon/page/list_cells.h"
#include "daemon/page/sections.h"
#include "estimator/base/text.h"
#include "tracker/advisory/time_text.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::page {

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

std::string ChangeCursorText(const store::ChangeCursor& cursor) {
  return std::to_string(cursor.committed_at) + "." + std::to_string(cursor.id);
}

std::optional<store::ChangeCursor> ParseChangeCursor(const std::string& text) {
  const size_t dot = text.find('.');
  if (dot == std::string::npos || text.size() > 41) return std::nullopt;
  store::ChangeCursor c;
  const char* end = text.data() + text.size();
  const auto [at_end, at_ec] = std::from_chars(text.data(), text.data() + dot, c.committed_at);
  const auto [id_end, id_ec] = std::from_chars(text.data() + dot + 1, end, c.id);
  if (at_ec != std::errc() || at_end != text.data() + dot || id_ec != std::errc() ||
      id_end != end || c.id < 1) {
    return std::nullopt;
  }
  return c;
}

Document BuildChangesPage(const ChangesPage& page) {
  const store::ChangeSearch& f = page.filter;
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
      Paragraph{{Text("Every change hubwatch found upstream, newest commit first, with the day it "
                      "was committed" +
                      (filters.empty() ? std::string(".") : "; only " + filters + ".") + " "),
                 Link("All changes", "/changes")}});
  std::vector<std::string> kinds;
  for (int i = 0; i <= static_cast<int>(diff::ChangeKind::kError); ++i) {
    kinds.emplace_back(diff::KindName(static_cast<diff::ChangeKind>(i)));
  }
  doc.lead.push_back(
      FilterForm{"/changes",
                 {{"repo", "Model", f.repo, {}, "google/gemma-2-9b-it"},
                  {"kind", "Kind", f.kind, kinds, ""},
                  {"impact", "Impact", f.impact, {"cosmetic", "behavioral", "breaking"}, ""},
                  {"since", "Since", page.since, {}, "a revision or 2024-06-01"}}});
  Section s{"changes", "Changes", {}};
  Table t{"Changes, newest commit first",
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
  if (!page.next_before.empty()) {
    std::string next = "/changes?before=" + QueryEscape(page.next_before);
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
