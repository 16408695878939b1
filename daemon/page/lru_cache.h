#pragma once

// LruCache<V>: values by key, computed on a miss, the most recently used kept up to a
// capacity. For values that never go stale under their key (a revision's estimate basis by
// repo@sha; a rendered page by its ETag, which names everything the page shows): the cache is
// never invalidated, only evicted.
//
// The capacity counts entries, or, with a `weigh` function, what weigh() says each value costs
// (bytes): the least recently used are evicted until the total fits, and a value that alone
// outweighs the capacity is returned and not kept.
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
  using Weigh = std::function<size_t(const V&)>;
  explicit LruCache(size_t capacity, Weigh weigh = nullptr)
      : capacity_(capacity), weigh_(std::move(weigh)) {}

  using Compute = std::function<Result<V>()>;
  Result<std::shared_ptr<const V>> Get(const std::string& key, const Compute& compute) {
    if (std::shared_ptr<const V> found = Find(key)) return found;
    Result<V> computed = compute();  // outside the lock: it reads the store, renders
    if (!computed.ok()) return computed.error();
    return Put(key, std::make_shared<const V>(std::move(computed).value()));
  }

  // The value under `key` (now the most recently used), or null.
  std::shared_ptr<const V> Find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    recent_.splice(recent_.begin(), recent_, it->second);
    return it->second->value;
  }

  // Keeps `value` under `key` unless one is there already; returns the one kept (or `value`,
  // when it is not kept).
  std::shared_ptr<const V> Put(const std::string& key, std::shared_ptr<const V> value) {
    const size_t weight = weigh_ ? weigh_(*value) : 1;
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) return it->second->value;
    if (weight > capacity_) return value;
    recent_.push_front({key, value, weight});
    index_.emplace(key, recent_.begin());
    total_ += weight;
    while (total_ > capacity_) {
      total_ -= recent_.back().weight;
      index_.erase(recent_.back().key);
      recent_.pop_back();
    }
    return value;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return recent_.size();
  }
  // What the kept values weigh together (their count without `weigh`).
  size_t weight() const {
    std::lock_guard<std::mutex> lock(mu_);
    return total_;
  }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const V> value;
    size_t weight;
  };
  const size_t capacity_;
  const Weigh weigh_;
  mutable std::mutex mu_;
  std::list<Entry> recent_;  // most recently used first
  std::map<std::string, typename std::list<Entry>::iterator, std::less<>> index_;
  size_t total_ = 0;  // guarded by mu_
};

}  // namespace hubwatch::page
