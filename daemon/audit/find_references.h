#pragma once

// FindReferences: one file's text to its model references, by the kind its name says it is
// (file_kind below). The unit every language test drives; ScanTree (scan_tree.h) calls it for
// each file it reads. Pure and thread-safe.

#include <string_view>

#include "daemon/audit/reference.h"

namespace hubwatch::audit {

enum class FileKind { kNone, kPython, kYaml, kJson, kToml, kShell, kPinFile, kStrictPinFile };

// The kind of a file by its name (`path`'s last component): *.py; *.yaml/*.yml; *.json;
// *.toml; *.sh/*.bash/*.zsh, Dockerfile*, *.dockerfile, Containerfile, Makefile, *.mk;
// *.hfpins; models.txt. kNone: discovery does not read it.
FileKind FileKindOf(std::string_view path);

// The references in `text`, read as FileKindOf(path); `path` is copied into each finding.
FileFindings FindReferences(std::string_view path, std::string_view text);

}  // namespace hubwatch::audit
