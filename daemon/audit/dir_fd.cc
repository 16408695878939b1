#include "daemon/audit/dir_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "estimator/base/text.h"

namespace hubwatch::audit {

DirFd::~DirFd() {
  if (fd_ >= 0) ::close(fd_);
}

DirFd& DirFd::operator=(DirFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Result<DirFd> DirFd::Open(const std::string& path) {
  const int fd = ::open(path.empty() ? "." : path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOTDIR) return Error::InvalidInput(EchoSafe(path) + " is not a directory");
    return Error::Io("cannot open " + EchoSafe(path) + ": " + std::strerror(error));
  }
  return DirFd(fd);
}

Result<DirFd> DirFd::Beneath(std::string_view relative) const {
  const int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    return Error::Io(std::string("cannot duplicate a descriptor: ") + std::strerror(errno));
  }
  DirFd current(fd);
  std::string walked;  // the components opened so far, for messages
  while (!relative.empty()) {
    const size_t slash = relative.find('/');
    const std::string name(relative.substr(0, slash));
    relative = slash == std::string_view::npos ? std::string_view() : relative.substr(slash + 1);
    if (name.empty() || name == ".") continue;
    walked += walked.empty() ? name : "/" + name;
    if (name == "..") return Error::InvalidInput(EchoSafe(walked) + ": '..' is not followed");
    const int next =
        ::openat(current.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      const int error = errno;
      struct stat st {};
      if (::fstatat(current.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        return Error::InvalidInput(EchoSafe(walked) + " is a symbolic link, not followed");
      }
      if (error == ENOTDIR) return Error::InvalidInput(EchoSafe(walked) + " is not a directory");
      return Error::Io("cannot open " + EchoSafe(walked) + ": " + std::strerror(error));
    }
    current = DirFd(next);
  }
  return current;
}

}  // namespace hubwatch::audit
