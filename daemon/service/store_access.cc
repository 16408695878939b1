#include "daemon/service/store_access.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "estimator/base/clock.h"

namespace hubwatch::service {

// Most writes one commit carries; bounds how long one batch holds the write lock.
constexpr size_t kMaxBatch = 64;

struct ThreadedStoreAccess::State {
  boost::asio::io_context& io;
  std::unique_ptr<store::Store> reads;
  std::unique_ptr<store::Store> writer;
  std::mutex mu;
  std::condition_variable cv;
  struct Item {
    Work work;
    Then then;          // may be empty
    bool soon = false;  // from WriteSoon
  };
  std::deque<Item> queue;   // every queued write, in submission order
  size_t urgent = 0;        // queued Write()s: the store thread starts at once when there is one
  SteadyTime soon_since{};  // when the oldest queued WriteSoon came
  bool stopping = false;
  size_t pending = 0;
  size_t failed_soon = 0;
  std::optional<SteadyTime> busy_since;  // set while items run
  std::thread thread;

  explicit State(boost::asio::io_context& io_context) : io(io_context) {}

  // Takes everything queued (up to kMaxBatch) and runs it in one transaction, so that a burst of
  // small writes (one poll state per finished poll) costs one commit and one fsync, not one
  // each. Each `then` runs after the commit, with its work's own status, or the commit's error
  // when the batch was not kept. When the batch cannot start (the database is locked by
  // another process past the busy timeout) or SQLite rolls it back on its own, the rest runs
  // one item at a time, each with its own transaction, as it would without batching.
  void Run() {
    std::vector<Item> items;
    std::vector<Status> statuses;
    while (true) {
      items.clear();
      {
        std::unique_lock lock(mu);
        // Wakes for a Write, for WriteSoon's that waited kSoonDelay or fill a batch, or to stop.
        auto ready = [&] { return stopping || urgent > 0 || queue.size() >= kMaxBatch; };
        while (!ready()) {
          if (queue.empty()) {
            cv.wait(lock);
          } else if (cv.wait_until(lock, soon_since + kSoonDelay) == std::cv_status::timeout) {
            break;
          }
        }
        if (queue.empty()) return;  // stopping, and everything queued is done
        while (!queue.empty() && items.size() < kMaxBatch) {
          if (!queue.front().soon) --urgent;
          items.push_back(std::move(queue.front()));
          queue.pop_front();
        }
        soon_since = SystemClock().Now();
        busy_since = soon_since;
      }
      statuses.assign(items.size(), Status::Ok());
      size_t done = 0;
      if (items.size() > 1) {
        Status batch = writer->Batch([&] {
          for (; done < items.size() && writer->InTransaction(); ++done) {
            statuses[done] = items[done].work(*writer);
          }
        });
        if (!batch.ok()) {
          for (size_t i = 0; i < done; ++i) {
            if (statuses[i].ok()) statuses[i] = batch;
          }
        }
      }
      for (; done < items.size(); ++done) statuses[done] = items[done].work(*writer);
      {
        std::lock_guard lock(mu);
        pending -= items.size();
        busy_since.reset();
        for (size_t i = 0; i < items.size(); ++i) {
          if (items[i].soon && !statuses[i].ok()) ++failed_soon;
        }
      }
      for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].then) continue;
        boost::asio::post(
            io, [then = std::move(items[i].then), s = statuses[i]]() mutable { then(s); });
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
      state_->queue.push_back({std::move(work), std::move(then), false});
      ++state_->pending;
      ++state_->urgent;
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

void ThreadedStoreAccess::WriteSoon(Work work) {
  std::lock_guard lock(state_->mu);
  if (state_->stopping) {
    ++state_->failed_soon;
    return;
  }
  if (state_->queue.empty()) state_->soon_since = SystemClock().Now();
  state_->queue.push_back({std::move(work), nullptr, true});
  ++state_->pending;
  if (state_->queue.size() == 1 || state_->queue.size() >= kMaxBatch) state_->cv.notify_one();
}

std::chrono::duration<double> ThreadedStoreAccess::busy_for() const {
  std::lock_guard lock(state_->mu);
  if (!state_->busy_since) return {};
  return SystemClock().Now() - *state_->busy_since;
}

size_t ThreadedStoreAccess::failed_soon_writes() const {
  std::lock_guard lock(state_->mu);
  return state_->failed_soon;
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
