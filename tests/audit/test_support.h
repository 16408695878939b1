#pragma once

// Helpers shared by the audit suites: a compact view of findings for EXPECT_THAT.

#include <string>
#include <vector>

#include "daemon/audit/reference.h"

namespace hubwatch::audit::testing {

// "LINE:COLUMN REPO@REVISION (KIND) RECOGNISED_BY" per reference.
inline std::vector<std::string> Brief(const std::vector<ModelReference>& refs) {
  std::vector<std::string> out;
  for (const ModelReference& r : refs) {
    out.push_back(std::to_string(r.line) + ":" + std::to_string(r.column) + " " + r.repo_id +
                  (r.revision.empty() ? "" : "@" + r.revision) + " (" +
                  std::string(RevisionKindName(r.revision_kind)) + ") " + r.recognised_by);
  }
  return out;
}

inline std::vector<int> Lines(const std::vector<Unresolved>& unresolved) {
  std::vector<int> out;
  for (const Unresolved& u : unresolved) out.push_back(u.line);
  return out;
}

}  // namespace hubwatch::audit::testing
