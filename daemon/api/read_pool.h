#pragma once

// ReadPool: a few worker threads that run the API's heavy read-only handlers (osv queries and
// batches, advisory lists and feeds, changes, estimates, plans) off the network thread, so a
// request that takes a second never delays /healthz or a badge. Each worker owns a read
// connection of its own (SQLite WAL: readers run concurrently with each other and the writer,
// and see committed transactions only); while a job runs, ReadPool::ThreadReads() is that
// connection.
//
// Jobs run in submission order across the workers. The queue is not bounded here: the server
// submits at most one job per connection (a session reads its next request only once the reply
// is written), so it holds at most max_connections jobs.
//
// Thread safety: Submit() from any thread. Stop() (the destructor) from a thread that is not a
// worker: it drops the jobs not started (destroying them on the calling thread), waits for the
// running ones and joins the workers. Ownership: the pool owns its connections.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::store {
class Store;
}

namespace hubwatch::api {

class ReadPool {
 public:
  using OpenReader = std::function<Result<std::unique_ptr<store::Store>>()>;

  // Opens `threads` (>= 1) connections with open_reader (here, on the calling thread, so that
  // a failure is Start's error) and starts a worker for each.
  static Result<std::unique_ptr<ReadPool>> Start(int threads, const OpenReader& open_reader);
  ~ReadPool();  // Stop()
  ReadPool(const ReadPool&) = delete;
  ReadPool& operator=(const ReadPool&) = delete;

  // Runs job() on a worker. After Stop(), job is dropped without running.
  void Submit(std::function<void()> job);
  // Drops the jobs not started, waits for the running ones, joins the workers. Idempotent.
  void Stop();

  // Inside a job: the worker's connection. Elsewhere: null.
  static store::Store* ThreadReads();

 private:
  explicit ReadPool(std::vector<std::unique_ptr<store::Store>> readers);
  void Work(store::Store* reads);

  std::vector<std::unique_ptr<store::Store>> readers_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
};

}  // namespace hubwatch::api
