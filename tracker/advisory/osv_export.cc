#include "tracker/advisory/osv_export.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tracker/diff/json_text.h"
#include "tracker/diff/terminal_text.h"

namespace hubwatch::advisory {
namespace {

constexpr size_t kMaxIdBytes = 128;

// A name for messages: escaped for the terminal, at most ~80 bytes.
std::string Shown(std::string_view text) {
  return diff::CutText(diff::EscapeForTerminal(text), 80);
}

Error Errno(std::string_view doing, const std::string& what) {
  return Error::Io(std::string(doing) + " " + Shown(what) + ": " + std::strerror(errno));
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
  // Closes now, reporting the result (a write error can surface only here).
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

// "DIR/" names what "DIR" names, but resolves a symbolic link at DIR: drop trailing slashes.
std::string WithoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Result<int> OpenDirectory(const std::string& dir, bool follow_dir_symlink) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(dir, ec);
  if (!ec && std::filesystem::is_symlink(status) && !follow_dir_symlink) {
    return Error::InvalidInput(Shown(dir) +
                               " is a symbolic link; refusing to export through it (pass "
                               "--follow-dir-symlink to allow it)");
  }
  if (ec || !std::filesystem::exists(status)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Error::Io("creating " + Shown(dir) + ": " + ec.message());
  }
  // The check above names the problem; O_NOFOLLOW is what holds if DIR changes meanwhile.
  const int fd = ::open(dir.c_str(),
                        O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow_dir_symlink ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    if (errno == ELOOP) {
      return Error::InvalidInput(Shown(dir) + " is a symbolic link; refusing to export through it");
    }
    if (errno == ENOTDIR) return Error::InvalidInput(Shown(dir) + " is not a directory");
    return Errno("opening", dir);
  }
  return fd;
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
    Error e = Error::Io(std::string(doing) + " " + name + " in " + Shown(dir) + ": " +
                        std::strerror(errno));
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

Status ExportOsvDatabase(const std::string& dir_arg,
                         const std::vector<ExportedAdvisory>& advisories, bool follow_dir_symlink) {
  for (const ExportedAdvisory& a : advisories) {
    if (!IsExportableId(a.id)) {
      return Error::Io("advisory id \"" + Shown(a.id) +
                       "\" cannot be a file name (letters, digits, '.', '_', '-'); nothing "
                       "exported");
    }
  }
  const std::string dir = WithoutTrailingSlashes(dir_arg);
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
