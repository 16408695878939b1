#pragma once

// FaultVfs: the store's file seam in tests, in the spirit of LevelDB's Env. An SQLite VFS that
// wraps the process's default one and, while a fault is set, fails the writes of the files under
// one directory (the database, its WAL, its journal):
//   kDiskFull     every write answers SQLITE_FULL and writes nothing: a full disk;
//   kShortWrite   every write puts the first half of its bytes on disk and answers SQLITE_FULL,
//                 as the unix VFS reports a write the kernel cut short: a torn page.
// Reads, syncs, locks and shared memory pass through untouched. Install() makes it the default
// VFS of the process, so the daemon under test opens its store through it unchanged: the
// disk-full and short-write faults need neither root nor a mount.
//
// Thread safety: Set() and writes() from any thread; SQLite calls the VFS from its own threads.
// Install() once per process, before the store opens (later calls return the same instance).

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace hubwatch::testing {

class FaultVfs {
 public:
  enum class Fault { kNone, kDiskFull, kShortWrite };

  static FaultVfs& Install() {
    static FaultVfs* vfs = new FaultVfs();  // never freed: SQLite keeps the registration
    return *vfs;
  }

  // Faults the writes of files whose path starts with `dir` (a directory, no trailing slash).
  void Set(Fault fault, const std::string& dir) {
    std::lock_guard lock(mutex_);
    dir_ = dir + "/";
    fault_ = fault;
  }
  void Clear() { Set(Fault::kNone, ""); }
  // Writes failed so far.
  int64_t failed_writes() const { return failed_.load(); }

 private:
  struct File {
    sqlite3_file base;   // pMethods: kMethods
    sqlite3_file* real;  // the wrapped file, in the same allocation just after this struct
    std::string* path;   // owned: the file's path, to match against the faulted directory
  };

  FaultVfs() {
    real_ = sqlite3_vfs_find(nullptr);
    vfs_ = *real_;  // every method but xOpen calls the default VFS's own
    vfs_.zName = "hubwatch-faults";
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + real_->szOsFile;
    vfs_.pNext = nullptr;
    vfs_.xOpen = &Open;
    sqlite3_vfs_register(&vfs_, /*makeDflt=*/1);
  }

  static FaultVfs& Self() { return Install(); }
  static File* Of(sqlite3_file* f) { return reinterpret_cast<File*>(f); }

  // The fault for a write to `path` now.
  Fault FaultFor(const std::string& path) {
    std::lock_guard lock(mutex_);
    return fault_ != Fault::kNone && path.rfind(dir_, 0) == 0 ? fault_ : Fault::kNone;
  }

  static int Open(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags,
                  int* out_flags) {
    FaultVfs& self = Self();
    File* f = Of(file);
    f->real = reinterpret_cast<sqlite3_file*>(f + 1);
    f->path = nullptr;
    file->pMethods = nullptr;
    const int rc = self.real_->xOpen(self.real_, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK || f->real->pMethods == nullptr) return rc;
    f->path = new std::string(name ? name : "");
    file->pMethods = self.WrapperOf(f->real->pMethods);
    return SQLITE_OK;
  }

  // One wrapper per kind of file the default VFS opens (its io_methods), made once.
  const sqlite3_io_methods* WrapperOf(const sqlite3_io_methods* real) {
    std::lock_guard lock(mutex_);
    auto [it, added] = wrappers_.try_emplace(real);
    if (added) it->second = Methods(real);
    return &it->second;
  }

  static sqlite3_io_methods Methods(const sqlite3_io_methods* real) {
    sqlite3_io_methods m = *real;  // pass-through unless wrapped below
    m.xClose = [](sqlite3_file* f) {
      const int rc = Of(f)->real->pMethods->xClose(Of(f)->real);
      delete Of(f)->path;
      return rc;
    };
    m.xRead = [](sqlite3_file* f, void* buf, int n, sqlite3_int64 at) {
      return Of(f)->real->pMethods->xRead(Of(f)->real, buf, n, at);
    };
    m.xWrite = &Write;
    m.xTruncate = [](sqlite3_file* f, sqlite3_int64 size) {
      return Of(f)->real->pMethods->xTruncate(Of(f)->real, size);
    };
    m.xSync = [](sqlite3_file* f, int flags) {
      return Of(f)->real->pMethods->xSync(Of(f)->real, flags);
    };
    m.xFileSize = [](sqlite3_file* f, sqlite3_int64* size) {
      return Of(f)->real->pMethods->xFileSize(Of(f)->real, size);
    };
    m.xLock = [](sqlite3_file* f, int lock) {
      return Of(f)->real->pMethods->xLock(Of(f)->real, lock);
    };
    m.xUnlock = [](sqlite3_file* f, int lock) {
      return Of(f)->real->pMethods->xUnlock(Of(f)->real, lock);
    };
    m.xCheckReservedLock = [](sqlite3_file* f, int* out) {
      return Of(f)->real->pMethods->xCheckReservedLock(Of(f)->real, out);
    };
    m.xFileControl = [](sqlite3_file* f, int op, void* arg) {
      return Of(f)->real->pMethods->xFileControl(Of(f)->real, op, arg);
    };
    m.xSectorSize = [](sqlite3_file* f) {
      return Of(f)->real->pMethods->xSectorSize(Of(f)->real);
    };
    m.xDeviceCharacteristics = [](sqlite3_file* f) {
      return Of(f)->real->pMethods->xDeviceCharacteristics(Of(f)->real);
    };
    if (real->iVersion >= 2) {
      m.xShmMap = [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
        return Of(f)->real->pMethods->xShmMap(Of(f)->real, page, size, extend, out);
      };
      m.xShmLock = [](sqlite3_file* f, int offset, int n, int flags) {
        return Of(f)->real->pMethods->xShmLock(Of(f)->real, offset, n, flags);
      };
      m.xShmBarrier = [](sqlite3_file* f) { Of(f)->real->pMethods->xShmBarrier(Of(f)->real); };
      m.xShmUnmap = [](sqlite3_file* f, int del) {
        return Of(f)->real->pMethods->xShmUnmap(Of(f)->real, del);
      };
    }
    if (real->iVersion >= 3) {
      m.xFetch = [](sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
        return Of(f)->real->pMethods->xFetch(Of(f)->real, at, n, out);
      };
      m.xUnfetch = [](sqlite3_file* f, sqlite3_int64 at, void* p) {
        return Of(f)->real->pMethods->xUnfetch(Of(f)->real, at, p);
      };
    }
    return m;
  }

  static int Write(sqlite3_file* file, const void* buf, int n, sqlite3_int64 at) {
    File* f = Of(file);
    FaultVfs& self = Self();
    switch (self.FaultFor(*f->path)) {
      case Fault::kNone:
        break;
      case Fault::kDiskFull:
        ++self.failed_;
        return SQLITE_FULL;
      case Fault::kShortWrite:
        ++self.failed_;
        (void)f->real->pMethods->xWrite(f->real, buf, n / 2, at);
        return SQLITE_FULL;
    }
    return f->real->pMethods->xWrite(f->real, buf, n, at);
  }

  sqlite3_vfs* real_ = nullptr;
  sqlite3_vfs vfs_{};
  std::mutex mutex_;
  std::map<const sqlite3_io_methods*, sqlite3_io_methods> wrappers_;
  std::string dir_;
  Fault fault_ = Fault::kNone;
  std::atomic<int64_t> failed_{0};
};

}  // namespace hubwatch::testing
