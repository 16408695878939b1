#include "daemon/audit/fix.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>
#include <utility>

#include "daemon/audit/dir_fd.h"
#include "daemon/audit/replace_at.h"
#include "estimator/base/text.h"

namespace hubwatch::audit {
namespace {

// Larger than any file the scan reads (ScanOptions::max_file_bytes), so a file that grew is
// refused rather than cut.
constexpr size_t kMaxFixBytes = 16 << 20;

bool IsWordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A commit id (7 to 40 hex digits): what a suggested revision must be before it is written
// into someone's file (it comes from the store or the server).
bool IsCommitId(const std::string& s) {
  return s.size() >= 7 && s.size() <= 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

// One place to rewrite: the span the scan found the literal `from` in, to become `to`.
struct Edit {
  SourceSpan span;
  std::string from;
  std::string to;
};

// The directory holding the file the report names `file`, and its name there.
struct Place {
  DirFd dir;
  std::string name;
};

std::string TrimSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// Opens the directory of dir_part below `root` (which the user named) and checks `name`.
Result<Place> PlaceBelow(const std::string& root, const std::string& relative) {
  const size_t slash = relative.rfind('/');
  const std::string dir_part = slash == std::string::npos ? "" : relative.substr(0, slash);
  std::string name = slash == std::string::npos ? relative : relative.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    return Error::InvalidInput("not a file name: " + EchoSafe(relative));
  }
  Result<DirFd> top = DirFd::Open(root);
  if (!top.ok()) return top.error();
  Result<DirFd> dir = top->Beneath(dir_part);
  if (!dir.ok()) return dir.error();
  return Place{std::move(dir).value(), std::move(name)};
}

// Finds `file` (as ScanTree names files) under the roots it came from.
Result<Place> Locate(const std::vector<std::string>& roots, const std::string& file) {
  for (const std::string& given : roots) {
    const std::string root = TrimSlashes(given);
    struct stat st {};
    if (::stat(root.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (roots.size() == 1) return PlaceBelow(root, file);  // names relative to the root
      const std::string prefix = root + "/";
      if (file.compare(0, prefix.size(), prefix) == 0) {
        return PlaceBelow(root, file.substr(prefix.size()));
      }
    } else if (S_ISREG(st.st_mode) && file == root) {
      const size_t slash = root.rfind('/');
      if (slash == std::string::npos) return PlaceBelow(".", root);
      return PlaceBelow(slash == 0 ? "/" : root.substr(0, slash), root.substr(slash + 1));
    }
  }
  return Error::InvalidInput("not under any scanned path");
}

// `text` with each edit made; `count` gets how many places changed. An error when a place no
// longer holds its literal exactly once as a whole token, or two edits disagree.
Result<std::string> Rewrite(const std::string& text, const std::vector<Edit>& edits, int* count) {
  std::vector<size_t> line_starts = {0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts.push_back(i + 1);
  }
  std::map<size_t, const Edit*> at;  // byte offset -> the edit made there
  for (const Edit& e : edits) {
    const SourceSpan& s = e.span;
    const std::string where = "line " + std::to_string(s.line);
    if (s.line < 1 || static_cast<size_t>(s.line) > line_starts.size() || s.column < 1 ||
        s.length < 1) {
      return Error::InvalidInput(where + " is no longer in the file");
    }
    const size_t line_begin = line_starts[static_cast<size_t>(s.line) - 1];
    const size_t line_end = std::min(text.find('\n', line_begin), text.size());
    const size_t begin = line_begin + static_cast<size_t>(s.column) - 1;
    const size_t end = begin + static_cast<size_t>(s.length);
    if (end > line_end) {
      return Error::InvalidInput(where + " no longer holds " + EchoSafe(e.from) +
                                 " where the scan read it");
    }
    size_t found = std::string::npos;
    int occurrences = 0;
    const std::string_view window = std::string_view(text).substr(begin, end - begin);
    for (size_t w = window.find(e.from); w != std::string_view::npos;
         w = window.find(e.from, w + 1)) {
      const size_t p = begin + w;
      const size_t after = p + e.from.size();
      const bool whole = (p == 0 || !IsWordByte(text[p - 1])) &&
                         (after == text.size() || !IsWordByte(text[after]));
      if (!whole) continue;
      found = p;
      ++occurrences;
    }
    if (occurrences != 1) {
      return Error::InvalidInput(where + (occurrences == 0 ? " no longer holds " : " holds ") +
                                 EchoSafe(e.from) +
                                 (occurrences == 0 ? " where the scan read it"
                                                   : " more than once where the scan read it"));
    }
    auto [it, inserted] = at.emplace(found, &e);
    if (!inserted && it->second->to != e.to) {
      return Error::InvalidInput(where + ": two references sharing " + EchoSafe(e.from) +
                                 " are told different revisions");
    }
  }
  std::string out;
  size_t copied = 0;
  *count = 0;
  for (const auto& [offset, e] : at) {
    if (offset < copied) return Error::InvalidInput("two places to rewrite overlap");
    out.append(text, copied, offset - copied);
    out += e->to;
    copied = offset + e->from.size();
    ++*count;
  }
  out.append(text, copied, std::string::npos);
  return out;
}

// Rewrites one file; the error, or "" (with fix->replaced set).
std::string FixFile(const std::vector<std::string>& roots, const std::vector<Edit>& edits,
                    FileFix* fix) {
  for (const Edit& e : edits) {
    if (!IsCommitId(e.to)) return "the suggested revision is not a commit id";
  }
  Result<Place> place = Locate(roots, fix->file);
  if (!place.ok()) return "not reached: " + place.error().message;
  Result<RegularFile> read = ReadRegularAt(place->dir, place->name, kMaxFixBytes);
  if (!read.ok()) return "cannot read it: " + read.error().message;
  int count = 0;
  Result<std::string> rewritten = Rewrite(read->content, edits, &count);
  if (!rewritten.ok()) return rewritten.error().message;
  if (Status s = ReplaceAt(place->dir, place->name, *rewritten, read->mode); !s.ok()) {
    return s.error().message;
  }
  fix->replaced = count;
  return "";
}

}  // namespace

std::vector<FileFix> ApplyFixes(const std::vector<std::string>& roots,
                                const std::vector<Finding>& findings) {
  std::map<std::string, std::vector<Edit>> wanted;  // by file
  std::map<std::string, std::string> unplaced;      // file -> why it cannot be fixed
  for (const Finding& f : findings) {
    const ModelReference& r = f.reference;
    const bool pinned =
        r.revision_kind == RevisionKind::kFullSha || r.revision_kind == RevisionKind::kShortSha;
    if (f.verdict != Verdict::kAffected || !pinned || f.suggested_revision.empty()) continue;
    std::vector<Edit>& edits = wanted[r.file];
    if (r.revision_at.empty()) {
      unplaced.emplace(r.file, "no revision literal found to rewrite (line " +
                                   std::to_string(r.line) +
                                   ": the revision is not written in one place)");
    }
    for (const SourceSpan& span : r.revision_at) {
      edits.push_back({span, r.revision, f.suggested_revision});
    }
  }
  std::vector<FileFix> out;
  for (const auto& [file, edits] : wanted) {
    FileFix fix{.file = file};
    if (auto it = unplaced.find(file); it != unplaced.end()) {
      fix.error = it->second;
    } else {
      fix.error = FixFile(roots, edits, &fix);
    }
    out.push_back(std::move(fix));
  }
  return out;
}

}  // namespace hubwatch::audit
