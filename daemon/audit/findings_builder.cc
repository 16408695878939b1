#include "daemon/audit/findings_builder.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "estimator/base/text.h"

namespace hubwatch::audit {

std::string QuoteSource(std::string_view text) { return "\"" + EchoSafe(text) + "\""; }

void FindingsBuilder::Add(std::string_view recognised_by, int line, int column,
                          const SourceValue& id, const SourceValue& revision, IdContext context) {
  if (id.kind == SourceValue::Kind::kAbsent) return;
  if (id.kind == SourceValue::Kind::kComputed) {
    AddUnresolved(line, std::string(recognised_by) + ": the model id comes from " + id.why);
    return;
  }
  if (LooksLikeLocalPath(id.text) || !IsHubRepoId(id.text, context)) return;
  ModelReference ref;
  ref.file = file_;
  ref.line = line;
  ref.column = column;
  ref.repo_id = id.text;
  ref.recognised_by = std::string(recognised_by);
  if (revision.kind == SourceValue::Kind::kComputed) {
    ref.revision_kind = RevisionKind::kComputed;
  } else if (revision.kind == SourceValue::Kind::kLiteral && !revision.text.empty()) {
    if (!IsRevisionSyntax(revision.text)) {
      AddUnresolved(line, std::string(recognised_by) + ": " + id.text + " has revision " +
                              QuoteSource(revision.text) + ", which is not a git revision");
      return;
    }
    ref.revision = revision.text;
    ref.revision_kind = ClassifyRevision(revision.text);
    ref.revision_at = revision.at;
  }
  findings_.references.push_back(std::move(ref));
}

void FindingsBuilder::AddUnresolved(int line, std::string why) {
  findings_.unresolved.push_back({file_, line, std::move(why)});
}

FileFindings FindingsBuilder::Take() {
  auto& refs = findings_.references;
  std::sort(refs.begin(), refs.end(), [](const ModelReference& a, const ModelReference& b) {
    return std::tie(a.line, a.column, a.repo_id, a.recognised_by) <
           std::tie(b.line, b.column, b.repo_id, b.recognised_by);
  });
  // One place names one model once, even when two recognisers both see it.
  refs.erase(std::unique(refs.begin(), refs.end(),
                         [](const ModelReference& a, const ModelReference& b) {
                           return a.line == b.line && a.column == b.column &&
                                  a.repo_id == b.repo_id;
                         }),
             refs.end());
  auto& un = findings_.unresolved;
  std::stable_sort(un.begin(), un.end(),
                   [](const Unresolved& a, const Unresolved& b) { return a.line < b.line; });
  un.erase(std::unique(un.begin(), un.end()), un.end());
  return std::exchange(findings_, {});
}

}  // namespace hubwatch::audit
