#include "daemon/audit/hub_id.h"

#include <array>
#include <cstddef>

namespace hubwatch::audit {
namespace {

constexpr size_t kMaxSegmentBytes = 96;

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool IsSegment(std::string_view s) {
  if (s.empty() || s.size() > kMaxSegmentBytes) return false;
  if (s.front() == '-' || s.front() == '.' || s.back() == '-' || s.back() == '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (!IsAsciiAlnum(c) && c != '-' && c != '_' && c != '.') return false;
    if (i > 0 && (c == '-' || c == '.') && s[i - 1] == c) return false;
  }
  return true;
}

bool EndsWithFileExtension(std::string_view name) {
  static constexpr std::array<std::string_view, 24> kExtensions = {
      ".json", ".jsonl", ".yaml",    ".yml", ".toml", ".py",  ".txt",  ".md",
      ".csv",  ".tsv",   ".parquet", ".bin", ".pt",   ".pth", ".ckpt", ".safetensors",
      ".gguf", ".onnx",  ".sh",      ".cfg", ".tar",  ".gz",  ".zip",  ".arrow"};
  for (std::string_view ext : kExtensions) {
    if (name.size() > ext.size() && name.substr(name.size() - ext.size()) == ext) return true;
  }
  return false;
}

}  // namespace

std::string_view RevisionKindName(RevisionKind kind) {
  switch (kind) {
    case RevisionKind::kFloating:
      return "floating";
    case RevisionKind::kFullSha:
      return "full-sha";
    case RevisionKind::kShortSha:
      return "short-sha";
    case RevisionKind::kName:
      return "name";
    case RevisionKind::kComputed:
      return "computed";
  }
  return "floating";
}

bool IsHubRepoId(std::string_view text, IdContext context) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return context == IdContext::kModelOnly && IsSegment(text);
  }
  std::string_view org = text.substr(0, slash);
  std::string_view name = text.substr(slash + 1);
  if (!IsSegment(org) || !IsSegment(name)) return false;  // a second '/' fails IsSegment
  return context == IdContext::kModelOnly || !EndsWithFileExtension(name);
}

bool LooksLikeLocalPath(std::string_view text) {
  if (text.empty()) return false;
  char first = text.front();
  if (first == '.' || first == '/' || first == '~' || first == '$') return true;
  if (text.find('\\') != std::string_view::npos) return true;
  if (text.size() >= 2 && text[1] == ':') return true;  // C:...
  size_t slash = text.find('/');
  return slash != std::string_view::npos &&
         (text.find('/', slash + 1) != std::string_view::npos || text.back() == '/');
}

bool IsRevisionSyntax(std::string_view text) {
  if (text.empty() || text.size() > 255 || text.front() == '-' || text.front() == '/') {
    return false;
  }
  for (char c : text) {
    if (!IsAsciiAlnum(c) && c != '.' && c != '_' && c != '/' && c != '+' && c != '-') return false;
  }
  return true;
}

RevisionKind ClassifyRevision(std::string_view revision) {
  if (revision.empty()) return RevisionKind::kFloating;
  bool all_hex = true;
  for (char c : revision) all_hex = all_hex && IsHex(c);
  if (all_hex && revision.size() == 40) return RevisionKind::kFullSha;
  if (all_hex && revision.size() >= 7 && revision.size() < 40) return RevisionKind::kShortSha;
  return RevisionKind::kName;
}

}  // namespace hubwatch::audit
