#pragma once

// An audit as SARIF 2.1.0 (OASIS), the log code-scanning UIs read (GitHub code scanning, GitLab,
// VS Code's SARIF viewer): one run of the tool "hubwatch", one rule per verdict worth showing,
// one result per reference that is not clean, at its file, line and column. An advisory's
// impact sets the level: breaking = error, behavioral = warning, cosmetic = note; a reference
// that cannot be judged (not tracked, an unknown or computed revision, floating) is a note.
// partialFingerprints keep a result's identity across runs (file, repo, revision, verdict), so
// a UI does not reopen what was dismissed. Checked against the official schema in the tests.
// Pure function.

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "daemon/audit/audit_report.h"

namespace hubwatch::audit {

nlohmann::json RenderSarif(const AuditResult& audit, std::string_view tool_version);

}  // namespace hubwatch::audit
