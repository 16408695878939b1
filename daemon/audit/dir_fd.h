#pragma once

// DirFd: an open directory that the audit's writes are made relative to (openat, renameat), so
// the directory a path named when it was checked is the one written in: a directory of the
// scanned tree swapped for a symbolic link between the scan and the write is refused, never
// followed. Move-only; the descriptor is closed on destruction. Thread-compatible.

#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::audit {

class DirFd {
 public:
  DirFd() = default;
  ~DirFd();
  DirFd(DirFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirFd& operator=(DirFd&& other) noexcept;
  DirFd(const DirFd&) = delete;
  DirFd& operator=(const DirFd&) = delete;

  // The directory at `path` as the user named it (a link in it is followed: the user chose it).
  // Errors: Io when it cannot be opened, InvalidInput when it is not a directory.
  static Result<DirFd> Open(const std::string& path);

  // The directory `relative` ('/'-separated; "" is this one) below this one, opened one
  // component at a time with O_NOFOLLOW | O_DIRECTORY. Errors: InvalidInput naming the
  // component when one is a symbolic link, not a directory, or ".."; Io otherwise.
  Result<DirFd> Beneath(std::string_view relative) const;

  int get() const { return fd_; }

 private:
  explicit DirFd(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace hubwatch::audit
