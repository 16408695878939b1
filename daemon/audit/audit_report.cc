#include "daemon/audit/audit_report.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "estimator/base/text.h"

namespace hubwatch::audit {
namespace {

// The length of the valid UTF-8 sequence starting at s[i], or 0.
size_t Utf8Length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  uint32_t min = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0)
    n = 2, min = 0x80;
  else if ((c & 0xF0) == 0xE0)
    n = 3, min = 0x800;
  else if ((c & 0xF8) == 0xF0)
    n = 4, min = 0x10000;
  else
    return 0;
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string Location(const ModelReference& r) {
  return EscapeControls(PrintableFileName(r.file)) + ":" + std::to_string(r.line);
}

nlohmann::json AdvisoriesJson(const std::vector<AuditAdvisory>& advisories) {
  nlohmann::json out = nlohmann::json::array();
  for (const AuditAdvisory& a : advisories) {
    out.push_back({{"id", a.id},
                   {"kind", a.kind},
                   {"impact", diff::ImpactName(a.impact)},
                   {"summary", EscapeControls(a.summary)},
                   {"fixed_in", a.fixed_in}});
  }
  return out;
}

}  // namespace

std::string PrintableFileName(const std::string& raw) {
  std::string out;
  for (size_t i = 0; i < raw.size();) {
    const size_t n = Utf8Length(raw, i);
    if (n == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(raw[i]));
      out += buf;
      ++i;
      continue;
    }
    out.append(raw, i, n);
    i += n;
  }
  return out;
}

std::string RenderText(const AuditResult& audit) {
  const ScanReport& scan = audit.scan;
  std::map<Verdict, size_t> counts;
  for (const Finding& f : audit.findings) ++counts[f.verdict];
  std::string out = "hubwatch audit: " + std::to_string(scan.references.size()) +
                    (scan.references.size() == 1 ? " model reference" : " model references") +
                    " in " + std::to_string(scan.files_scanned) + " files read (" +
                    std::to_string(scan.files_skipped) + " skipped), judged by " +
                    EscapeControls(audit.judged_by);
  if (!audit.since.empty()) out += ", received since " + EscapeControls(audit.since);
  out += "\n";
  if (!counts.empty()) {
    std::string line;
    for (const auto& [verdict, n] : counts) {
      line +=
          (line.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(VerdictName(verdict));
    }
    out += line + "\n";
  }
  for (const Finding& f : audit.findings) {
    const ModelReference& r = f.reference;
    std::string revision = r.revision.empty() ? std::string("(floating)") : r.revision;
    if (r.revision_kind == RevisionKind::kComputed) revision = "(computed)";
    out += "\n" + Location(r) + "  " + r.repo_id + "@" + EscapeControls(revision) + "  " +
           std::string(VerdictName(f.verdict));
    if (f.worst) out += " (" + std::string(diff::ImpactName(*f.worst)) + ")";
    out += "\n  " + f.message + "\n";
    const std::vector<AuditAdvisory>& listed =
        f.evidence.derivative ? f.evidence.derivative->lagging : f.evidence.advisories;
    constexpr size_t kListed = 5;  // the rest are in --json
    for (size_t i = 0; i < listed.size() && i < kListed; ++i) {
      const AuditAdvisory& a = listed[i];
      out += "    " + a.id + "  " + std::string(diff::ImpactName(a.impact)) + "  " +
             EscapeControls(Clip(a.summary, 100)) + "\n";
    }
    if (listed.size() > kListed) {
      out += "    and " + std::to_string(listed.size() - kListed) + " more (--json lists all)\n";
    }
  }
  if (!scan.unresolved.empty()) {
    out += "\nNot read (computed at run time):\n";
    for (const Unresolved& u : scan.unresolved) {
      out += "  " + EscapeControls(PrintableFileName(u.file)) + ":" + std::to_string(u.line) +
             "  " + EscapeControls(u.why) + "\n";
    }
  }
  if (!scan.problems.empty()) {
    out += "\nSkipped:\n";
    for (const ScanProblem& p : scan.problems) {
      out += "  " + EscapeControls(PrintableFileName(p.path)) + "  " + EscapeControls(p.message) +
             "\n";
    }
  }
  return out;
}

nlohmann::json RenderJson(const AuditResult& audit) {
  const ScanReport& scan = audit.scan;
  nlohmann::json refs = nlohmann::json::array();
  nlohmann::json by_verdict = nlohmann::json::object();
  std::optional<diff::Impact> worst;
  for (const Finding& f : audit.findings) {
    const ModelReference& r = f.reference;
    nlohmann::json j = {{"file", PrintableFileName(r.file)},
                        {"line", r.line},
                        {"column", r.column},
                        {"repo", r.repo_id},
                        {"revision", r.revision},
                        {"revision_kind", RevisionKindName(r.revision_kind)},
                        {"recognised_by", r.recognised_by},
                        {"verdict", VerdictName(f.verdict)},
                        {"worst", f.worst ? nlohmann::json(diff::ImpactName(*f.worst)) : nullptr},
                        {"message", f.message},
                        {"tracked", f.evidence.tracked},
                        {"sha", f.evidence.sha},
                        {"newest", f.evidence.newest},
                        {"suggested_revision", f.suggested_revision},
                        {"advisories", AdvisoriesJson(f.evidence.advisories)}};
    if (const auto& d = f.evidence.derivative) {
      j["derivative"] = {{"upstream", d->upstream},
                         {"relation", d->relation},
                         {"head", d->head},
                         {"current", d->current},
                         {"lagging", AdvisoriesJson(d->lagging)}};
    }
    refs.push_back(std::move(j));
    const std::string name(VerdictName(f.verdict));
    by_verdict[name] = by_verdict.value(name, 0) + 1;
    if (f.worst) worst = worst ? diff::MaxImpact(*worst, *f.worst) : *f.worst;
  }
  nlohmann::json unresolved = nlohmann::json::array();
  for (const Unresolved& u : scan.unresolved) {
    unresolved.push_back({{"file", PrintableFileName(u.file)}, {"line", u.line}, {"why", u.why}});
  }
  nlohmann::json problems = nlohmann::json::array();
  for (const ScanProblem& p : scan.problems) {
    problems.push_back({{"path", PrintableFileName(p.path)}, {"message", p.message}});
  }
  return {{"references", std::move(refs)},
          {"unresolved", std::move(unresolved)},
          {"problems", std::move(problems)},
          {"summary",
           {{"references", audit.findings.size()},
            {"files_scanned", scan.files_scanned},
            {"files_skipped", scan.files_skipped},
            {"by_verdict", std::move(by_verdict)},
            {"worst", worst ? nlohmann::json(diff::ImpactName(*worst)) : nullptr},
            {"judged_by", audit.judged_by},
            {"since", audit.since}}}};
}

}  // namespace hubwatch::audit
