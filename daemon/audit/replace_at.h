#pragma once

// One file of an open directory (dir_fd.h), read and replaced without following a symbolic
// link at its name and without creating anything through one: the read opens it O_NOFOLLOW |
// O_NONBLOCK (a fifo costs an error, never a hang) and takes regular files only; the
// replacement is written to a new temporary file in the same directory under a fresh
// unpredictable name (O_CREAT | O_EXCL | O_NOFOLLOW: a planted file or link is never opened),
// flushed with fsync and renamed over the name (renameat: a link there is replaced, its target
// untouched), so a reader sees the old file or the new one. Thread-compatible.

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/audit/dir_fd.h"
#include "estimator/base/result.h"

namespace hubwatch::audit {

struct RegularFile {
  std::string content;
  mode_t mode = 0;  // its permission bits
};

// dir/name. Errors: InvalidInput when it is a symbolic link, not a regular file, or over
// `max_bytes`; Io when it cannot be opened or read (ENOENT included). Messages name nothing:
// the caller says which file.
Result<RegularFile> ReadRegularAt(const DirFd& dir, const std::string& name, size_t max_bytes);

// Replaces (or creates) dir/name with `content`, with permission bits `mode` when given (else
// 0644 less the umask). On error the file is left as it was and no temporary remains. Errors:
// Io; messages name nothing.
Status ReplaceAt(const DirFd& dir, const std::string& name, std::string_view content,
                 std::optional<mode_t> mode);

}  // namespace hubwatch::audit
