#include "daemon/api/read_pool.h"

#include <algorithm>

#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

thread_local store::Store* thread_reads = nullptr;

}  // namespace

Result<std::unique_ptr<ReadPool>> ReadPool::Start(int threads, const OpenReader& open_reader) {
  std::vector<std::unique_ptr<store::Store>> readers;
  for (int i = 0; i < std::max(1, threads); ++i) {
    Result<std::unique_ptr<store::Store>> reader = open_reader();
    if (!reader.ok()) return reader.error();
    readers.push_back(std::move(reader).value());
  }
  return std::unique_ptr<ReadPool>(new ReadPool(std::move(readers)));
}

ReadPool::ReadPool(std::vector<std::unique_ptr<store::Store>> readers)
    : readers_(std::move(readers)) {
  for (const std::unique_ptr<store::Store>& reads : readers_) {
    workers_.emplace_back([this, reads = reads.get()] { Work(reads); });
  }
}

ReadPool::~ReadPool() { Stop(); }

void ReadPool::Submit(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void ReadPool::Stop() {
  std::deque<std::function<void()>> dropped;  // destroyed here, outside the lock
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(jobs_);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

store::Store* ReadPool::ThreadReads() { return thread_reads; }

void ReadPool::Work(store::Store* reads) {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    thread_reads = reads;
    job();
    thread_reads = nullptr;
  }
}

}  // namespace hubwatch::api
