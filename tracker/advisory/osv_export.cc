#include "tracker/advisory/osv_export.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "tracker/diff/json_text.h"
#include "tracker/diff/terminal_text.h"

namespace hubwatch::advisory {
namespace {

constexpr size_t kMaxIdBytes = 128;

// A name for messages: escaped for the terminal, at most ~80 bytes; a path gets ~160, as the
// configuration's messages give paths (their end names what is meant).
std::string Shown(std::string_view text, size_t max = 80) {
  return diff::CutText(diff::EscapeForTerminal(text), max);
}
std::string ShownPath(std::string_view path) { return Shown(path, 160); }

Error Errno(std::string_view doing, const std::string& what) {
  const int error = errno;  // before anything below can change it
  return Error::Io(std::string(doing) + " " + ShownPath(what) + ": " + std::strerror(error));
}

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // Closes the one held (if any) and holds `fd`.
  void Reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Gives the descriptor up to the caller.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes now, reporting the result (a write error can surface only here).
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

// Why `name` (in the directory `parent_fd`; `prefix`: DIR up to it) could not be opened as a
// directory (`error`: open's errno). open(O_NOFOLLOW | O_DIRECTORY) says ENOTDIR or ELOOP for a
// link, so the component itself is looked at.
Error ComponentError(int error, int parent_fd, const std::string& name, const std::string& dir,
                     const std::string& prefix, bool follow_dir_symlink) {
  struct stat st {};
  const bool link =
      ::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
  std::string trimmed = dir;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const std::string where =
      prefix == trimmed ? ShownPath(dir) : ShownPath(prefix) + " (in " + ShownPath(dir) + ")";
  if (link && !follow_dir_symlink) {
    return Error::InvalidInput(where +
                               " is a symbolic link; refusing to export through it (pass "
                               "--follow-dir-symlink to allow it)");
  }
  if (error == ENOTDIR) return Error::InvalidInput(where + " is not a directory");
  return Error::Io("opening " + where + ": " + std::strerror(error));
}

// Opens DIR one component at a time, each relative to the one before (openat), creating the
// missing ones (mkdirat). Without follow_dir_symlink every component is opened with O_NOFOLLOW:
// a symbolic link anywhere in DIR - first, in the middle, last, before "/." or "/.." - is
// refused, and nothing is created through it, even if the link is swapped in meanwhile.
// ".." is the parent of the directory opened so far (never a link); "." and "//" are skipped.
Result<int> OpenDirectory(const std::string& dir, bool follow_dir_symlink) {
  if (dir.empty()) return Error::InvalidInput("the export directory is empty");
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow_dir_symlink ? 0 : O_NOFOLLOW);
  const bool absolute = dir.front() == '/';
  int fd = ::open(absolute ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("opening", absolute ? "/" : ".");
  Fd current(fd);
  std::string prefix = absolute ? "/" : "";
  for (size_t start = 0; start < dir.size();) {
    size_t end = dir.find('/', start);
    if (end == std::string::npos) end = dir.size();
    const std::string name = dir.substr(start, end - start);
    start = end + 1;
    if (name.empty() || name == ".") continue;
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    prefix += name;
    int next = ::openat(current.get(), name.c_str(), flags);
    if (next < 0 && errno == ENOENT) {
      if (::mkdirat(current.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
        const int error = errno;
        return Error::Io("creating " + ShownPath(prefix) + ": " + std::strerror(error));
      }
      next = ::openat(current.get(), name.c_str(), flags);  // what is there now, link or not
    }
    if (next < 0) {
      return ComponentError(errno, current.get(), name, dir, prefix, follow_dir_symlink);
    }
    current.Reset(next);
  }
  return current.Release();
}

// Writes `content` to dir/name: a new temporary file beside it, fsync, rename over the name.
Status WriteFileAt(int dir_fd, const std::string& dir, const std::string& name,
                   const std::string& content) {
  static std::atomic<unsigned> counter{0};
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = "." + name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd = ::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) return Errno("creating a file in", dir);
  }
  if (fd < 0) return Errno("creating a file in", dir);
  Fd file(fd);
  auto fail = [&](std::string_view doing) {  // names are exportable ids: short and plain
    const int error = errno;
    Error e = Error::Io(std::string(doing) + " " + name + " in " + ShownPath(dir) + ": " +
                        std::strerror(error));
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return e;
  };
  for (size_t written = 0; written < content.size();) {
    const ssize_t n = ::write(file.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("writing");
    written += static_cast<size_t>(n);
  }
  if (::fsync(file.get()) != 0) return fail("flushing");
  if (file.Close() != 0) return fail("closing");
  // rename() replaces whatever is at `name` (a regular file or a symbolic link, never its target).
  if (::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0) return fail("replacing");
  return Status::Ok();
}

std::string Dump(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

bool IsExportableId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes || id.front() == '.' || id == "all") return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status ExportOsvDatabase(const std::string& dir, const std::vector<ExportedAdvisory>& advisories,
                         bool follow_dir_symlink) {
  for (const ExportedAdvisory& a : advisories) {
    if (!IsExportableId(a.id)) {
      return Error::Io("advisory id \"" + Shown(a.id) +
                       "\" cannot be a file name (letters, digits, '.', '_', '-'); nothing "
                       "exported");
    }
  }
  Result<int> opened = OpenDirectory(dir, follow_dir_symlink);
  if (!opened.ok()) return opened.error();
  Fd dir_fd(*opened);
  nlohmann::json all = nlohmann::json::array();
  for (const ExportedAdvisory& a : advisories) {
    if (Status s = WriteFileAt(dir_fd.get(), dir, a.id + ".json", Dump(*a.osv)); !s.ok()) return s;
    all.push_back({{"id", a.id}, {"modified", a.modified}});
  }
  if (Status s = WriteFileAt(dir_fd.get(), dir, "all.json", Dump(all)); !s.ok()) return s;
  if (::fsync(dir_fd.get()) != 0) return Errno("flushing", dir);  // the renames themselves
  return Status::Ok();
}

}  // namespace hubwatch::advisory
