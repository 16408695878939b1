#pragma once

// ScanTree: walks source trees and finds the Hugging Face model references in them
// (find_references.h reads each file). Honours the root's and nested .gitignore files
// (gitignore.h) and always skips .git, .hg, .svn, node_modules, .venv, venv and __pycache__.
// Reads only files whose name says discovery understands them, at most
// ScanOptions::max_file_bytes each, and never follows a symbolic link, so a hostile tree (a
// link loop, a 10 GB sparse file, a fifo, a file that vanishes or turns unreadable mid-scan)
// costs one ScanProblem line each, never a hang or a crash. Thread-safe: each call has its own
// state.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "daemon/audit/reference.h"
#include "estimator/base/result.h"

namespace hubwatch::audit {

struct ScanOptions {
  uint64_t max_file_bytes = uint64_t{1} << 20;  // larger files are noted, never read
  bool honour_gitignore = true;
  // Test seam: called with a file's path after the walk lists it and before it is opened (a
  // test deletes or replaces the file there). Empty in production.
  std::function<void(const std::string& path)> before_open;
};

// A file or directory the scan could not read, or chose not to, and why ("over the 1 MiB
// size cap (10,737,418,240 bytes), not read").
struct ScanProblem {
  std::string path{};  // as ModelReference::file
  std::string message{};
};

struct ScanReport {
  std::vector<ModelReference> references{};  // sorted by (file, line, column, repo_id)
  std::vector<Unresolved> unresolved{};      // sorted by (file, line)
  std::vector<ScanProblem> problems{};       // sorted by path
  int64_t files_scanned = 0;                 // files read and searched
  int64_t files_skipped = 0;  // files seen but not searched: a type discovery does not read,
                              // a link, binary, too big, unreadable (gitignored: not counted)
};

// Scans each root (a directory or a single file). Paths in the report are relative to the
// root; with several roots, each is prefixed with its root as given. An error only when a root
// itself is unusable (missing, unreadable, not a file or directory, or no roots at all).
Result<ScanReport> ScanTree(const std::vector<std::string>& roots, const ScanOptions& options);

}  // namespace hubwatch::audit
