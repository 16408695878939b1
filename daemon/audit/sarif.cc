#include "daemon/audit/sarif.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace hubwatch::audit {
namespace {

struct Rule {
  Verdict verdict;
  const char* id;
  const char* name;
  const char* text;
};
constexpr Rule kRules[] = {
    {Verdict::kAffected, "HW001", "PinnedRevisionMissesUpstreamChanges",
     "The pinned revision has not taken upstream changes hubwatch reported (advisories whose range "
     "holds it)."},
    {Verdict::kReceived, "HW002", "FloatingReferenceReceivedChanges",
     "A reference that follows a branch received upstream changes since the time asked."},
    {Verdict::kLagging, "HW003", "DerivativeLagsOnUpstreamFixes",
     "The model is a derivative of a tracked repo and has not taken its upstream fixes."},
    {Verdict::kUnknownRevision, "HW004", "PinnedRevisionUnknown",
     "The pinned revision is not a revision hubwatch has stored for the repo."},
    {Verdict::kNotTracked, "HW005", "RepoNotTracked",
     "hubwatch does not track the repo, so no upstream change of it is judged."},
    {Verdict::kComputed, "HW006", "RevisionComputedAtRunTime",
     "The revision is computed at run time, so the reference cannot be judged."},
    {Verdict::kFloating, "HW007", "ReferenceFloats",
     "The reference names no revision: it loads whatever upstream pushes next."},
};

const char* LevelOf(const Finding& f) {
  if (!f.worst) return "note";
  switch (*f.worst) {
    case diff::Impact::kBreaking:
      return "error";
    case diff::Impact::kBehavioral:
      return "warning";
    case diff::Impact::kCosmetic:
      return "note";
  }
  return "note";
}

// A relative path as a URI reference: RFC 3986 unreserved characters and '/' kept, every other
// byte percent-encoded.
std::string UriOf(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

nlohmann::json RenderSarif(const AuditResult& audit, std::string_view tool_version) {
  nlohmann::json rules = nlohmann::json::array();
  for (const Rule& r : kRules) {
    rules.push_back({{"id", r.id},
                     {"name", r.name},
                     {"shortDescription", {{"text", r.text}}},
                     {"properties", {{"verdict", VerdictName(r.verdict)}}}});
  }
  nlohmann::json results = nlohmann::json::array();
  for (const Finding& f : audit.findings) {
    if (f.verdict == Verdict::kCurrent) continue;
    size_t index = 0;
    while (index < std::size(kRules) && kRules[index].verdict != f.verdict) ++index;
    if (index == std::size(kRules)) continue;
    const ModelReference& ref = f.reference;
    nlohmann::json region = {{"startLine", std::max(1, ref.line)}};
    if (ref.column > 0) region["startColumn"] = ref.column;
    nlohmann::json result = {
        {"ruleId", kRules[index].id},
        {"ruleIndex", index},
        {"level", LevelOf(f)},
        {"message", {{"text", ref.repo_id + ": " + f.message}}},
        {"locations",
         {{{"physicalLocation",
            {{"artifactLocation", {{"uri", UriOf(ref.file)}, {"uriBaseId", "%SRCROOT%"}}},
             {"region", std::move(region)}}}}}},
        {"partialFingerprints",
         {{"hubwatchReference/v1", UriOf(ref.file) + ":" + ref.repo_id + "@" + ref.revision + ":" +
                                       std::string(VerdictName(f.verdict))}}},
        {"properties",
         {{"repo", ref.repo_id},
          {"revision", ref.revision},
          {"verdict", VerdictName(f.verdict)},
          {"advisories", nlohmann::json::array()}}}};
    const std::vector<AuditAdvisory>& listed =
        f.evidence.derivative ? f.evidence.derivative->lagging : f.evidence.advisories;
    for (const AuditAdvisory& a : listed) result["properties"]["advisories"].push_back(a.id);
    if (!f.suggested_revision.empty()) {
      result["properties"]["suggested_revision"] = f.suggested_revision;
    }
    results.push_back(std::move(result));
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs",
           {{{"tool",
              {{"driver",
                {{"name", "hubwatch"},
                 {"version", std::string(tool_version)},
                 {"rules", std::move(rules)}}}}},
             {"results", std::move(results)}}}}};
}

}  // namespace hubwatch::audit
