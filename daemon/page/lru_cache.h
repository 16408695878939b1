#pragma once

// LruCache<V>: values by key, computed on a miss, the `capacity` most recently used kept. For
// values that never go stale under their key (a revision's estimate by repo@sha; a rendered
// page by its ETag, which names everything the page shows): the cache is never invalidated,
// only evicted.
//
// Thread safety: all members may be called from any thread (the API's read pool). Two threads
// that miss the same key together both compute; the first to finish is kept and returned to
// both. A failed compute is returned and not kept.

#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "estimator/base/result.h"

namespace hubwatch::page {

template <typename V>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  using Compute = std::function<Result<V>()>;
  Result<std::shared_ptr<const V>> Get(const std::string& key, const Compute& compute) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = index_.find(key); it != index_.end()) {
        recent_.splice(recent_.begin(), recent_, it->second);
        return it->second->second;
      }
    }
    Result<V> computed = compute();  // outside the lock: it reads the store, renders
    if (!computed.ok()) return computed.error();
    auto value = std::make_shared<const V>(std::move(computed).value());
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) return it->second->second;
    if (capacity_ == 0) return value;
    recent_.emplace_front(key, value);
    index_.emplace(key, recent_.begin());
    if (recent_.size() > capacity_) {
      index_.erase(recent_.back().first);
      recent_.pop_back();
    }
    return value;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return recent_.size();
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const V>>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> recent_;  // most recently used first
  std::map<std::string, typename std::list<Entry>::iterator, std::less<>> index_;
};

}  // namespace hubwatch::page
