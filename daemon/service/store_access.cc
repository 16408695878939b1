#include "store_access.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace hubwatch::service {

// Most writes one commit carries; bounds how long one batch holds the write lock.
constexpr size_t kMaxBatch = 64;

struct ThreadedStoreAccess::State {
  boost::asio::io_context& io;
  std::unique_ptr<store::Store> reads;
  std::unique_ptr<store::Store> writer;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<Work, Then>> queue;
  bool stopping = false;
  size_t pending = 0;
  std::thread thread;

  explicit State(boost::asio::io_context& io_context) : io(io_context) {}

  // Takes everything queued (up to kMaxBatch) and runs it in one transaction, so that a burst of
  // small writes (one poll state per finished poll) costs one commit and one fsync, not one
  // each. Each `then` runs after the commit, with its work's own status, or the commit's error
  // when the batch was not kept. When the batch cannot start (the database is locked by
  // another process past the busy timeout) or SQLite rolls it back on its own, the rest runs
  // one item at a time, each with its own transaction, as it would without batching.
  void Run() {
    std::vector<std::pair<Work, Then>> items;
    std::vector<Status> statuses;
    while (true) {
      items.clear();
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;  // stopping, and everything queued is done
        while (!queue.empty() && items.size() < kMaxBatch) {
          items.push_back(std::move(queue.front()));
          queue.pop_front();
        }
      }
      statuses.assign(items.size(), Status::Ok());
      size_t done = 0;
      if (items.size() > 1) {
        Status batch = writer->Batch([&] {
          for (; done < items.size() && writer->InTransaction(); ++done) {
            statuses[done] = items[done].first(*writer);
          }
        });
        if (!batch.ok()) {
          for (size_t i = 0; i < done; ++i) {
            if (statuses[i].ok()) statuses[i] = batch;
          }
        }
      }
      for (; done < items.size(); ++done) statuses[done] = items[done].first(*writer);
      {
        std::lock_guard lock(mu);
        pending -= items.size();
      }
      for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].second) continue;
        boost::asio::post(
            io, [then = std::move(items[i].second), s = statuses[i]]() mutable { then(s); });
      }
    }
  }
};

Result<std::unique_ptr<ThreadedStoreAccess>> ThreadedStoreAccess::Open(
    boost::asio::io_context& io, const std::string& path, const store::StoreOptions& options) {
  auto state = std::make_unique<State>(io);
  Result<std::unique_ptr<store::Store>> writer = store::Store::Open(path, options);
  if (!writer.ok()) return writer.error();
  Result<std::unique_ptr<store::Store>> reads = store::Store::Open(path, options);
  if (!reads.ok()) return reads.error();
  state->writer = std::move(writer).value();
  state->reads = std::move(reads).value();
  State* raw = state.get();
  state->thread = std::thread([raw] { raw->Run(); });
  return std::unique_ptr<ThreadedStoreAccess>(new ThreadedStoreAccess(std::move(state)));
}

ThreadedStoreAccess::ThreadedStoreAccess(std::unique_ptr<State> state) : state_(std::move(state)) {}

ThreadedStoreAccess::~ThreadedStoreAccess() { Shutdown(); }

store::Store& ThreadedStoreAccess::reads() { return *state_->reads; }

store::Store& ThreadedStoreAccess::writer() { return *state_->writer; }

void ThreadedStoreAccess::Write(Work work, Then then) {
  {
    std::lock_guard lock(state_->mu);
    if (!state_->stopping) {
      state_->queue.emplace_back(std::move(work), std::move(then));
      ++state_->pending;
      state_->cv.notify_one();
      return;
    }
  }
  if (then) {
    boost::asio::post(state_->io, [then = std::move(then)] {
      then(Error::Io("store: shutting down, the write was not done"));
    });
  }
}

size_t ThreadedStoreAccess::pending_writes() const {
  std::lock_guard lock(state_->mu);
  return state_->pending;
}

void ThreadedStoreAccess::Shutdown() {
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
    state_->cv.notify_one();
  }
  if (state_->thread.joinable()) state_->thread.join();
}

}  // namespace hubwatch::service
