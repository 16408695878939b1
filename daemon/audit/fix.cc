#include "daemon/audit/fix.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "estimator/base/text.h"

namespace hubwatch::audit {
namespace {

bool IsWordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string ErrnoText(int e) { return std::strerror(e); }

// The file the report names `file`, on disk.
std::string PathOf(const std::vector<std::string>& roots, const std::string& file) {
  struct stat st {};
  if (roots.size() == 1 && stat(roots.front().c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::string root = roots.front();
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    return root + "/" + file;
  }
  return file;
}

// Writes `text` over `path` atomically, keeping its mode. An error message, or "".
std::string Replace(const std::string& path, const std::string& text) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return ErrnoText(errno);
  const std::string temp = path + ".hubwatch-fix";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
  if (fd < 0) return "cannot create " + EchoSafe(temp) + ": " + ErrnoText(errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = ErrnoText(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      return "cannot write: " + why;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = ErrnoText(errno);
    ::unlink(temp.c_str());
    return "cannot write: " + why;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = ErrnoText(errno);
    ::unlink(temp.c_str());
    return "cannot replace the file: " + why;
  }
  return "";
}

}  // namespace

std::string ReplaceToken(const std::string& text, const std::string& from, const std::string& to,
                         int* count) {
  *count = 0;
  if (from.empty()) return text;
  std::string out;
  size_t at = 0;
  for (size_t found = text.find(from); found != std::string::npos;
       found = text.find(from, found + 1)) {
    if (found < at) continue;
    const size_t end = found + from.size();
    const bool whole = (found == 0 || !IsWordByte(text[found - 1])) &&
                       (end == text.size() || !IsWordByte(text[end]));
    if (!whole) continue;
    out.append(text, at, found - at);
    out += to;
    at = end;
    ++*count;
  }
  out.append(text, at, std::string::npos);
  return out;
}

std::vector<FileFix> ApplyFixes(const std::vector<std::string>& roots,
                                const std::vector<Finding>& findings) {
  // File -> (old revision -> new), for the pins that have fixes to take.
  std::map<std::string, std::map<std::string, std::string>> wanted;
  for (const Finding& f : findings) {
    const ModelReference& r = f.reference;
    const bool pinned =
        r.revision_kind == RevisionKind::kFullSha || r.revision_kind == RevisionKind::kShortSha;
    if (f.verdict != Verdict::kAffected || !pinned || f.suggested_revision.empty()) continue;
    wanted[r.file][r.revision] = f.suggested_revision;
  }
  std::vector<FileFix> out;
  for (const auto& [file, changes] : wanted) {
    FileFix fix{.file = file};
    const std::string path = PathOf(roots, file);
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in.is_open()) text << in.rdbuf();
    if (!in.is_open() || in.bad()) {
      fix.error = "cannot read it";
      out.push_back(std::move(fix));
      continue;
    }
    std::string rewritten = text.str();
    for (const auto& [from, to] : changes) {
      int n = 0;
      rewritten = ReplaceToken(rewritten, from, to, &n);
      fix.replaced += n;
    }
    if (fix.replaced == 0) {
      fix.error = "no revision literal found to rewrite";
    } else {
      fix.error = Replace(path, rewritten);
      if (!fix.error.empty()) fix.replaced = 0;
    }
    out.push_back(std::move(fix));
  }
  return out;
}

}  // namespace hubwatch::audit
