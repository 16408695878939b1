#pragma once

// StoreAccess: how code on the network thread reaches the database without blocking that
// thread on writes.
//
//   reads()           a connection for short reads, used only on the network thread
//                     (SQLite WAL: readers see every committed write, never a partial one)
//   Write(work, then) runs work(writer) on the store thread - one writer connection, writes
//                     serialised in submission order - then runs then(status) back on the
//                     network thread
//   WriteSoon(work)   a write nobody waits for, whose loss costs only repeated work (a repo's
//                     poll times): it joins the next batch, at most kSoonDelay later; a crash
//                     before then loses it. Failures are counted, not reported.
//
// ThreadedStoreAccess is the daemon's (a worker thread); InlineStoreAccess runs everything on
// the calling thread, for tests and one-shot commands.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "estimator/base/result.h"
#include "tracker/store/store.h"

namespace boost::asio {
class io_context;
}

namespace hubwatch::service {

class StoreAccess {
 public:
  using Work = std::function<Status(store::Store& writer)>;
  using Then = std::function<void(Status)>;

  virtual ~StoreAccess() = default;
  virtual store::Store& reads() = 0;
  // `then` may be empty. Work submitted after Shutdown() fails with an Io error.
  virtual void Write(Work work, Then then) = 0;
  virtual void WriteSoon(Work work) = 0;
  // Writes queued so far (WriteSoon's included), for /metrics.
  virtual size_t pending_writes() const = 0;
  // WriteSoon writes that failed, since the start.
  virtual size_t failed_soon_writes() const = 0;
  // How long the writes now running have been running (0 when idle): it passes the busy
  // timeout when another process holds the database's write lock.
  virtual std::chrono::duration<double> busy_for() const = 0;
};

// The page cache of each of the daemon's two connections. An unchanged cycle updates every repo's
// row: at SQLite's default (2,000 KiB) the writer's cache ended up holding the whole repos table
// (1.7 MiB of heap at 10,000 repos, heaptrack) and the reader's 0.5 MiB of the ETag lookups'
// pages; at 512 KiB the TLS h2 cycle's peak RSS fell from 26.9 to 25.9 MiB and its CPU did not
// measurably change (the pages come from the OS's cache; BENCHMARKS.md "The real wire").
inline constexpr int64_t kDaemonPageCacheKib = 512;

// How late a WriteSoon write may be written.
inline constexpr std::chrono::milliseconds kSoonDelay{1000};

// REQUIRES: io outlives the access object; Shutdown() (or destruction) finishes queued work.
class ThreadedStoreAccess final : public StoreAccess {
 public:
  static Result<std::unique_ptr<ThreadedStoreAccess>> Open(boost::asio::io_context& io,
                                                           const std::string& path,
                                                           const store::StoreOptions& options = {});
  ~ThreadedStoreAccess() override;
  store::Store& reads() override;
  void Write(Work work, Then then) override;
  void WriteSoon(Work work) override;
  size_t pending_writes() const override;
  size_t failed_soon_writes() const override;
  std::chrono::duration<double> busy_for() const override;
  // The writer connection itself. REQUIRES: used only from work running on the store thread.
  store::Store& writer();
  // Runs what is queued, then stops the store thread. Idempotent.
  void Shutdown();

 private:
  struct State;
  explicit ThreadedStoreAccess(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Work runs at once on the calling thread; `then` right after it.
class InlineStoreAccess final : public StoreAccess {
 public:
  explicit InlineStoreAccess(store::Store& store) : store_(store) {}
  store::Store& reads() override { return store_; }
  void Write(Work work, Then then) override {
    Status s = work(store_);
    if (then) then(s);
  }
  void WriteSoon(Work work) override {
    if (!work(store_).ok()) ++failed_soon_writes_;
  }
  size_t pending_writes() const override { return 0; }
  size_t failed_soon_writes() const override { return failed_soon_writes_; }
  std::chrono::duration<double> busy_for() const override { return {}; }

 private:
  store::Store& store_;
  size_t failed_soon_writes_ = 0;
};

}  // namespace hubwatch::service
