#include "tracker/hub/etag_cache.h"

#include <deque>
#include <mutex>

namespace hubwatch::hub {

struct InMemoryEtagCache::State {
  mutable std::mutex mutex;
  size_t max_bytes;
  size_t bytes = 0;
  std::map<std::string, CachedResponse, std::less<>> entries;
  std::deque<std::string> order;  // insertion order, for eviction
};

InMemoryEtagCache::InMemoryEtagCache(size_t max_bytes) : state_(std::make_unique<State>()) {
  state_->max_bytes = max_bytes;
}
InMemoryEtagCache::~InMemoryEtagCache() = default;

std::optional<CachedResponse> InMemoryEtagCache::Lookup(std::string_view key) {
  std::lock_guard lock(state_->mutex);
  auto it = state_->entries.find(key);
  if (it == state_->entries.end()) return std::nullopt;
  return it->second;
}

void InMemoryEtagCache::Store(std::string key, CachedResponse response) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (response.body.size() > s.max_bytes) return;
  if (auto it = s.entries.find(key); it != s.entries.end()) {
    s.bytes -= it->second.body.size();
    s.entries.erase(it);
    std::erase(s.order, key);
  }
  s.bytes += response.body.size();
  s.order.push_back(key);
  s.entries.emplace(std::move(key), std::move(response));
  while (s.bytes > s.max_bytes && !s.order.empty()) {
    auto it = s.entries.find(s.order.front());
    s.bytes -= it->second.body.size();
    s.entries.erase(it);
    s.order.pop_front();
  }
}

size_t InMemoryEtagCache::size() const {
  std::lock_guard lock(state_->mutex);
  return state_->entries.size();
}

}  // namespace hubwatch::hub
