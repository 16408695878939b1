#include "daemon/audit/replace_at.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>

#include "estimator/base/text.h"

namespace hubwatch::audit {
namespace {

constexpr int kMaxTempAttempts = 16;

std::string Why(int error) { return std::strerror(error); }

// ".hubwatch-tmp-" and 16 random hex digits: a name nobody can plant in advance.
std::string TempName() {
  std::random_device random;
  const uint64_t bits = (static_cast<uint64_t>(random()) << 32) ^ random();
  std::string bytes(8, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(bits >> (8 * i));
  return ".hubwatch-tmp-" + HexLower(bytes);
}

}  // namespace

Result<RegularFile> ReadRegularAt(const DirFd& dir, const std::string& name, size_t max_bytes) {
  const int fd = ::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ELOOP) return Error::InvalidInput("a symbolic link, not followed");
    return Error::Io("cannot open it: " + Why(error));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error::InvalidInput("not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Error::InvalidInput("larger than " + Grouped(max_bytes) + " bytes");
  }
  RegularFile file{.content = std::string(), .mode = static_cast<mode_t>(st.st_mode & 07777)};
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return Error::Io("cannot read it: " + Why(error));
    }
    if (n == 0) break;
    file.content.append(buffer, static_cast<size_t>(n));
    if (file.content.size() > max_bytes) {
      ::close(fd);
      return Error::InvalidInput("grew past " + Grouped(max_bytes) + " bytes while read");
    }
  }
  ::close(fd);
  return file;
}

Status ReplaceAt(const DirFd& dir, const std::string& name, std::string_view content,
                 std::optional<mode_t> mode) {
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < kMaxTempAttempts && fd < 0; ++attempt) {
    temp = TempName();
    fd = ::openat(dir.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  mode.value_or(0644));
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return Error::Io("cannot create a temporary file beside it: " + Why(errno));
  auto fail = [&](const char* doing) {
    const int error = errno;
    ::close(fd);
    ::unlinkat(dir.get(), temp.c_str(), 0);
    return Error::Io(std::string(doing) + ": " + Why(error));
  };
  if (mode && ::fchmod(fd, *mode) != 0) return fail("cannot set its mode");
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("cannot write");
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("cannot flush");
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlinkat(dir.get(), temp.c_str(), 0);
    return Error::Io("cannot write: " + Why(error));
  }
  if (::renameat(dir.get(), temp.c_str(), dir.get(), name.c_str()) != 0) {
    const int error = errno;
    ::unlinkat(dir.get(), temp.c_str(), 0);
    return Error::Io("cannot replace it: " + Why(error));
  }
  return Status::Ok();
}

}  // namespace hubwatch::audit
