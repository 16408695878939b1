#pragma once

// The three forms of one audit: a table for people (the default), JSON for machines
// (--json), and SARIF 2.1.0 (--sarif, sarif.h) for code-scanning UIs. File names are raw bytes
// of the tree and summaries are upstream's text: every form escapes them for where it goes.
// Pure functions.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "daemon/audit/judgement.h"
#include "daemon/audit/scan_tree.h"

namespace hubwatch::audit {

struct AuditResult {
  ScanReport scan{};
  std::vector<Finding> findings{};  // one per scan.references, in order
  std::string judged_by{};          // "store hubwatch.db", "server http://..."
  std::string since{};              // as asked; "" none
};

// The table: one line per reference (file:line, repo, revision, verdict) and its message, then
// what could not be read. Control and bidi characters are shown as escapes.
std::string RenderText(const AuditResult& audit);

// {"references": [...], "unresolved": [...], "problems": [...], "summary": {...}}: each
// reference with its verdict, worst impact, message, the advisories and suggested revision.
nlohmann::json RenderJson(const AuditResult& audit);

// A file name as valid UTF-8 for JSON (bytes that are not are written as "\xNN").
std::string PrintableFileName(const std::string& raw);

}  // namespace hubwatch::audit
