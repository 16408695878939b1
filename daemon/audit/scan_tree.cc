#include "daemon/audit/scan_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <iterator>
#include <memory>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "daemon/audit/find_references.h"
#include "daemon/audit/gitignore.h"
#include "estimator/base/text.h"

namespace hubwatch::audit {
namespace {

constexpr size_t kBinarySniffBytes = 8192;
constexpr std::array<std::string_view, 7> kAlwaysSkipped = {
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__"};

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

std::string Join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

// The .gitignore rules in force in one directory: its own and its ancestors'.
struct IgnoreFrame {
  std::shared_ptr<const IgnoreFrame> parent;
  std::string base;  // the directory holding the .gitignore, relative to the root
  IgnoreRules rules;
};

bool Ignored(const IgnoreFrame* frame, const std::string& relative, bool is_directory) {
  for (; frame != nullptr; frame = frame->parent.get()) {
    if (frame->rules.empty()) continue;
    std::string_view path = relative;
    if (!frame->base.empty()) path.remove_prefix(frame->base.size() + 1);
    IgnoreRules::Verdict verdict = frame->rules.Match(path, is_directory);
    if (verdict != IgnoreRules::Verdict::kNoMatch) return verdict == IgnoreRules::Verdict::kIgnore;
  }
  return false;
}

class Walker {
 public:
  Walker(const ScanOptions& options, ScanReport& report) : options_(options), report_(report) {}

  // Walks the directory `root`; `display` prefixes every path in the report.
  void WalkDirectory(const std::string& root, const std::string& display) {
    display_ = display;
    struct Pending {
      std::string relative;
      std::shared_ptr<const IgnoreFrame> ignore;
    };
    std::vector<Pending> stack;
    stack.push_back({"", nullptr});
    while (!stack.empty()) {
      Pending dir = std::move(stack.back());
      stack.pop_back();
      std::string absolute = dir.relative.empty() ? root : root + "/" + dir.relative;
      std::vector<std::pair<std::string, unsigned char>> entries;
      struct stat st {};
      if (!List(absolute, dir.relative, &entries, &st)) continue;
      if (!visited_.insert({st.st_dev, st.st_ino}).second) {
        Problem(dir.relative, "directory already visited (a loop through a mount), not entered");
        continue;
      }
      std::shared_ptr<const IgnoreFrame> ignore = dir.ignore;
      if (options_.honour_gitignore) {
        std::string text;
        if (ReadSmallFile(absolute + "/.gitignore", &text)) {
          ignore = std::make_shared<IgnoreFrame>(
              IgnoreFrame{dir.ignore, dir.relative, IgnoreRules::Parse(text)});
        }
      }
      for (auto& [name, type] : entries) {
        std::string relative = Join(dir.relative, name);
        std::string path = root + "/" + relative;
        if (type == DT_UNKNOWN) type = TypeOf(path);
        if (type == DT_DIR) {
          bool skip =
              std::find(kAlwaysSkipped.begin(), kAlwaysSkipped.end(), name) != kAlwaysSkipped.end();
          if (!skip && !Ignored(ignore.get(), relative, true)) stack.push_back({relative, ignore});
        } else if (!Ignored(ignore.get(), relative, false)) {
          Entry(path, relative, type);
        }
      }
    }
  }

  // One file seen by the walk (or given as a root).
  void Entry(const std::string& path, const std::string& relative, unsigned char type) {
    if (type == DT_LNK) {
      ++report_.files_skipped;
      struct stat target {};
      if (stat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode)) {
        Problem(relative, "symbolic link to a directory, not followed");
      }
      return;
    }
    if (FileKindOf(relative) == FileKind::kNone) {
      ++report_.files_skipped;
      return;
    }
    ScanFile(path, relative);
  }

  void set_display(std::string display) { display_ = std::move(display); }

 private:
  bool List(const std::string& absolute, const std::string& relative,
            std::vector<std::pair<std::string, unsigned char>>* entries, struct stat* st) {
    int fd = open(absolute.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      Problem(relative, "cannot open directory: " + ErrnoText(errno));
      return false;
    }
    if (fstat(fd, st) != 0) {
      Problem(relative, "cannot stat directory: " + ErrnoText(errno));
      close(fd);
      return false;
    }
    DIR* d = fdopendir(fd);
    if (d == nullptr) {
      Problem(relative, "cannot read directory: " + ErrnoText(errno));
      close(fd);
      return false;
    }
    while (dirent* e = readdir(d)) {
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      entries->emplace_back(std::string(name), e->d_type);
    }
    closedir(d);
    std::sort(entries->begin(), entries->end());
    return true;
  }

  static unsigned char TypeOf(const std::string& path) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return DT_UNKNOWN;
    if (S_ISDIR(st.st_mode)) return DT_DIR;
    if (S_ISLNK(st.st_mode)) return DT_LNK;
    if (S_ISREG(st.st_mode)) return DT_REG;
    return DT_UNKNOWN;
  }

  // A .gitignore (or any file up to the cap) into *text; false when absent or unreadable.
  bool ReadSmallFile(const std::string& path, std::string* text) {
    int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
              static_cast<uint64_t>(st.st_size) <= options_.max_file_bytes;
    if (ok) {
      text->resize(static_cast<size_t>(st.st_size));
      ssize_t got = read(fd, text->data(), text->size());
      ok = got >= 0;
      if (ok) text->resize(static_cast<size_t>(got));
    }
    close(fd);
    return ok;
  }

  void ScanFile(const std::string& path, const std::string& relative) {
    if (options_.before_open) options_.before_open(path);
    ++report_.files_skipped;  // until it is read
    int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      Problem(relative, errno == ENOENT ? "vanished during the scan, not read"
                                        : "cannot open: " + ErrnoText(errno));
      return;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      Problem(relative, "not a regular file, not read");
      close(fd);
      return;
    }
    uint64_t cap = options_.max_file_bytes;
    if (static_cast<uint64_t>(st.st_size) > cap) {
      Problem(relative, "over the " + Grouped(cap) + "-byte size cap (" +
                            Grouped(static_cast<uint64_t>(st.st_size)) + " bytes), not read");
      close(fd);
      return;
    }
    buffer_.resize(static_cast<size_t>(cap) + 1);
    size_t used = 0;
    int error = 0;
    while (used < buffer_.size()) {
      ssize_t got = read(fd, buffer_.data() + used, buffer_.size() - used);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) error = errno;
      if (got <= 0) break;
      used += static_cast<size_t>(got);
    }
    close(fd);
    if (error != 0) {
      Problem(relative, "read failed: " + ErrnoText(error));
      return;
    }
    if (used > cap) {
      Problem(relative, "grew past the " + Grouped(cap) + "-byte size cap while read, not scanned");
      return;
    }
    std::string_view text(buffer_.data(), used);
    if (text.substr(0, kBinarySniffBytes).find('\0') != std::string_view::npos) {
      Problem(relative, "binary (a NUL byte in its first 8 KiB), not scanned");
      return;
    }
    --report_.files_skipped;
    ++report_.files_scanned;
    FileFindings found = FindReferences(Display(relative), text);
    std::move(found.references.begin(), found.references.end(),
              std::back_inserter(report_.references));
    std::move(found.unresolved.begin(), found.unresolved.end(),
              std::back_inserter(report_.unresolved));
  }

  std::string Display(const std::string& relative) const {
    if (display_.empty()) return relative;
    return relative.empty() ? display_ : display_ + "/" + relative;
  }

  void Problem(const std::string& relative, std::string message) {
    report_.problems.push_back({Display(relative.empty() ? "." : relative), std::move(message)});
  }

  const ScanOptions& options_;
  ScanReport& report_;
  std::string display_;
  std::string buffer_;
  std::set<std::pair<dev_t, ino_t>> visited_;
};

std::string TrimSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

Result<ScanReport> ScanTree(const std::vector<std::string>& roots, const ScanOptions& options) {
  if (roots.empty()) return Error::InvalidInput("no path to scan");
  ScanReport report;
  for (const std::string& given : roots) {
    std::string root = TrimSlashes(given);
    struct stat st {};
    if (stat(root.c_str(), &st) != 0) {
      return Error::Io(EchoSafe(given) + ": " + ErrnoText(errno));
    }
    Walker walker(options, report);
    if (S_ISDIR(st.st_mode)) {
      walker.WalkDirectory(root, roots.size() > 1 ? root : "");
    } else if (S_ISREG(st.st_mode)) {
      walker.Entry(root, root, DT_REG);
    } else {
      return Error::InvalidInput(EchoSafe(given) + ": not a file or directory");
    }
  }
  std::sort(report.references.begin(), report.references.end(),
            [](const ModelReference& a, const ModelReference& b) {
              return std::tie(a.file, a.line, a.column, a.repo_id) <
                     std::tie(b.file, b.line, b.column, b.repo_id);
            });
  std::sort(report.unresolved.begin(), report.unresolved.end(),
            [](const Unresolved& a, const Unresolved& b) {
              return std::tie(a.file, a.line, a.why) < std::tie(b.file, b.line, b.why);
            });
  std::sort(report.problems.begin(), report.problems.end(),
            [](const ScanProblem& a, const ScanProblem& b) {
              return std::tie(a.path, a.message) < std::tie(b.path, b.message);
            });
  return report;
}

}  // namespace hubwatch::audit
