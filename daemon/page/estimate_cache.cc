#include "daemon/page/estimate_cache.h"

namespace hubwatch::page {

Result<std::shared_ptr<const RevisionEstimate>> EstimateCache::Get(const std::string& repo,
                                                                   const std::string& sha,
                                                                   const Compute& compute) {
  const std::string key = repo + "@" + sha;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      recent_.splice(recent_.begin(), recent_, it->second);
      return it->second->second;
    }
  }
  Result<RevisionEstimate> computed = compute();  // outside the lock: it reads the store
  if (!computed.ok()) return computed.error();
  auto value = std::make_shared<const RevisionEstimate>(std::move(computed).value());
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

size_t EstimateCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recent_.size();
}

}  // namespace hubwatch::page
