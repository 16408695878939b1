#include "daemon/audit/find_references.h"

#include "daemon/audit/config_references.h"
#include "daemon/audit/pin_file.h"
#include "daemon/audit/python_references.h"
#include "daemon/audit/shell_references.h"

namespace hubwatch::audit {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

FileKind FileKindOf(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (EndsWith(name, ".py")) return FileKind::kPython;
  if (EndsWith(name, ".yaml") || EndsWith(name, ".yml")) return FileKind::kYaml;
  if (EndsWith(name, ".json")) return FileKind::kJson;
  if (EndsWith(name, ".toml")) return FileKind::kToml;
  if (EndsWith(name, ".sh") || EndsWith(name, ".bash") || EndsWith(name, ".zsh") ||
      name.rfind("Dockerfile", 0) == 0 || EndsWith(name, ".dockerfile") ||
      name == "Containerfile" || name == "Makefile" || name == "makefile" ||
      name == "GNUmakefile" || EndsWith(name, ".mk")) {
    return FileKind::kShell;
  }
  if (EndsWith(name, ".hfpins")) return FileKind::kStrictPinFile;
  if (name == "models.txt") return FileKind::kPinFile;
  return FileKind::kNone;
}

FileFindings FindReferences(std::string_view path, std::string_view text) {
  switch (FileKindOf(path)) {
    case FileKind::kNone:
      return {};
    case FileKind::kPython:
      return FindPythonReferences(path, text);
    case FileKind::kYaml:
      return FindConfigReferences(path, text, ConfigFormat::kYaml);
    case FileKind::kJson:
      return FindConfigReferences(path, text, ConfigFormat::kJson);
    case FileKind::kToml:
      return FindConfigReferences(path, text, ConfigFormat::kToml);
    case FileKind::kShell:
      return FindShellReferences(path, text);
    case FileKind::kPinFile:
      return FindPinFileReferences(path, text, false);
    case FileKind::kStrictPinFile:
      return FindPinFileReferences(path, text, true);
  }
  return {};
}

}  // namespace hubwatch::audit
