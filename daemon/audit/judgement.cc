#include "daemon/audit/judgement.h"

#include <cassert>

#include "estimator/base/text.h"

namespace hubwatch::audit {
namespace {

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

// Upstream text as one safe line.
std::string Safe(const std::string& text) { return EscapeControls(Clip(text, 120)); }

// "a fine-tune", "an adapter", "a quantization", "a merge": what a derivative is of upstream.
std::string RelationPhrase(const std::string& relation) {
  if (relation == "finetune") return "a fine-tune";
  if (relation == "adapter") return "an adapter";
  if (relation == "quantized") return "a quantization";
  if (relation == "merge") return "a merge";
  return "a derivative (" + Safe(relation) + ")";
}

std::optional<diff::Impact> Worst(const std::vector<AuditAdvisory>& advisories) {
  std::optional<diff::Impact> worst;
  for (const AuditAdvisory& a : advisories)
    worst = worst ? diff::MaxImpact(*worst, a.impact) : a.impact;
  return worst;
}

// "3 upstream changes (worst breaking: config.json: hidden_size 4096 -> 5120)"
std::string Changes(const std::vector<AuditAdvisory>& advisories, diff::Impact worst) {
  const AuditAdvisory* first = nullptr;
  for (const AuditAdvisory& a : advisories) {
    if (a.impact == worst && !first) first = &a;
  }
  std::string out = std::to_string(advisories.size()) +
                    (advisories.size() == 1 ? " upstream change" : " upstream changes");
  out += " (worst " + std::string(diff::ImpactName(worst));
  if (first && !first->summary.empty()) out += ": " + Safe(first->summary);
  return out + ")";
}

Finding JudgeOne(const ModelReference& ref, const Evidence& e, const std::string& since) {
  Finding f{.reference = ref, .evidence = e};
  const bool pinned =
      ref.revision_kind == RevisionKind::kFullSha || ref.revision_kind == RevisionKind::kShortSha;
  if (!e.tracked) {
    if (e.derivative) {
      const DerivativeLag& d = *e.derivative;
      f.worst = Worst(d.lagging);
      f.verdict = f.worst ? Verdict::kLagging : Verdict::kNotTracked;
      f.message = RelationPhrase(d.relation) + " of " + d.upstream + " (not tracked itself): ";
      if (f.worst) {
        f.message += "at " + Short(d.head) + " it lags on " + Changes(d.lagging, *f.worst);
      } else {
        f.message += d.current ? "at " + Short(d.head) + " it has taken every upstream fix"
                               : "not checked against upstream's newest fix yet";
      }
      return f;
    }
    f.verdict = Verdict::kNotTracked;
    f.message = "hubwatch does not track " + ref.repo_id + ": add {\"id\": \"" + ref.repo_id +
                "\"} to the configuration's repos, or POST it to /api/v1/repos";
    return f;
  }
  if (ref.revision_kind == RevisionKind::kComputed) {
    f.verdict = Verdict::kComputed;
    f.message = "the revision is computed at run time: pin a literal revision to be judged";
    return f;
  }
  f.worst = Worst(e.advisories);
  if (pinned) {
    if (e.sha.empty()) {
      f.verdict = Verdict::kUnknownRevision;
      f.message = "pinned to " + ref.revision + ", which hubwatch has not stored" +
                  (e.problem.empty() ? std::string() : ": " + Safe(e.problem));
      return f;
    }
    if (!e.newest.empty() && e.newest != e.sha) f.suggested_revision = e.newest;
    if (f.worst) {
      f.verdict = Verdict::kAffected;
      f.message =
          "pinned to " + Short(e.sha) + ", which has not taken " + Changes(e.advisories, *f.worst);
    } else {
      f.verdict = Verdict::kCurrent;
      f.message = "pinned to " + Short(e.sha) + ": no advisory affects it" +
                  (e.newest == e.sha ? " (the newest revision)" : "");
    }
    if (!f.suggested_revision.empty()) {
      f.message += "; revision=\"" + f.suggested_revision + "\" takes every fix";
    }
    return f;
  }
  // Floating, or a branch or tag name: it takes whatever upstream pushes.
  const std::string what = ref.revision_kind == RevisionKind::kName
                               ? "follows " + Safe(ref.revision)
                               : std::string("floats on the default branch");
  f.suggested_revision = e.newest;
  if (f.worst) {
    f.verdict = Verdict::kReceived;
    f.message = what + " and received " + Changes(e.advisories, *f.worst);
  } else {
    f.verdict = Verdict::kFloating;
    f.message = what + (since.empty() ? "" : ": nothing received since " + Safe(since));
  }
  if (!e.newest.empty())
    f.message += "; pin revision=\"" + e.newest + "\" to choose when it changes";
  return f;
}

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kAffected:
      return "affected";
    case Verdict::kCurrent:
      return "current";
    case Verdict::kReceived:
      return "received";
    case Verdict::kFloating:
      return "floating";
    case Verdict::kUnknownRevision:
      return "unknown-revision";
    case Verdict::kComputed:
      return "computed-revision";
    case Verdict::kLagging:
      return "lagging-derivative";
    case Verdict::kNotTracked:
      return "not-tracked";
  }
  return "not-tracked";
}

std::vector<EvidenceRequest> RequestsFor(const std::vector<ModelReference>& references) {
  std::vector<EvidenceRequest> out;
  out.reserve(references.size());
  for (const ModelReference& r : references) {
    out.push_back({.repo = r.repo_id, .revision = r.revision, .kind = r.revision_kind});
  }
  return out;
}

std::vector<Finding> Judge(const std::vector<ModelReference>& references,
                           const std::vector<Evidence>& evidence, const std::string& since) {
  assert(references.size() == evidence.size());
  std::vector<Finding> out;
  out.reserve(references.size());
  for (size_t i = 0; i < references.size() && i < evidence.size(); ++i) {
    out.push_back(JudgeOne(references[i], evidence[i], since));
  }
  return out;
}

bool AnyAtOrAbove(const std::vector<Finding>& findings, diff::Impact threshold) {
  for (const Finding& f : findings) {
    if (f.worst && static_cast<int>(*f.worst) >= static_cast<int>(threshold)) return true;
  }
  return false;
}

}  // namespace hubwatch::audit
