#include "daemon/schedule/repo_ids.h"

#include <algorithm>
#include <cstring>

namespace hubwatch::schedule {

uint64_t RepoIds::Hash(std::string_view id) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : id) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

size_t RepoIds::Probe(std::string_view id, bool* found) const {
  const size_t mask = slots_.size() - 1;
  size_t at = Hash(id) & mask;
  size_t reuse = SIZE_MAX;
  for (;; at = (at + 1) & mask) {
    const uint32_t s = slots_[at];
    if (s == kEmpty) {
      *found = false;
      return reuse != SIZE_MAX ? reuse : at;
    }
    if (s == kGone) {
      if (reuse == SIZE_MAX) reuse = at;
    } else if (Name(s) == id) {
      *found = true;
      return at;
    }
  }
}

std::optional<RepoIds::Index> RepoIds::Find(std::string_view id) const {
  if (slots_.empty()) return std::nullopt;
  bool found = false;
  const size_t at = Probe(id, &found);
  if (!found) return std::nullopt;
  return slots_[at];
}

RepoIds::Span RepoIds::Store(std::string_view id) {
  if (used_in_last_ + id.size() > kChunkBytes) {
    chunks_.push_back(std::make_unique<char[]>(std::max(kChunkBytes, id.size())));
    used_in_last_ = 0;
  }
  Span s;
  s.chunk = static_cast<uint32_t>(chunks_.size() - 1);
  s.offset = static_cast<uint32_t>(used_in_last_);
  s.length = static_cast<uint16_t>(id.size());
  s.live = true;
  if (!id.empty()) std::memcpy(chunks_.back().get() + used_in_last_, id.data(), id.size());
  used_in_last_ += id.size();
  live_bytes_ += id.size();
  return s;
}

RepoIds::Index RepoIds::Intern(std::string_view id) {
  // At most half the slots used (live and tombstones): probes stay short.
  if ((live_ + gone_ + 1) * 2 > slots_.size()) {
    size_t capacity = 16;
    while (capacity < (live_ + 1) * 3) capacity *= 2;
    Rehash(capacity);
  }
  bool found = false;
  const size_t at = Probe(id, &found);
  if (found) return slots_[at];
  Index i;
  if (!free_.empty()) {
    i = free_.back();
    free_.pop_back();
  } else {
    i = static_cast<Index>(spans_.size());
    spans_.emplace_back();
  }
  spans_[i] = Store(id);
  if (slots_[at] == kGone) --gone_;
  slots_[at] = i;
  ++live_;
  return i;
}

void RepoIds::Release(Index i) {
  bool found = false;
  const size_t at = Probe(Name(i), &found);
  if (found) slots_[at] = kGone;
  ++gone_;
  --live_;
  live_bytes_ -= spans_[i].length;
  dead_bytes_ += spans_[i].length;
  spans_[i] = Span{};  // not live, and no view into text a repack reclaims
  free_.push_back(i);
  if (dead_bytes_ > kChunkBytes && dead_bytes_ > live_bytes_) Repack();
}

void RepoIds::Rehash(size_t capacity) {
  slots_.assign(capacity, kEmpty);
  gone_ = 0;
  const size_t mask = capacity - 1;
  for (Index i = 0; i < spans_.size(); ++i) {
    if (!spans_[i].live) continue;
    size_t at = Hash(Name(i)) & mask;
    while (slots_[at] != kEmpty) at = (at + 1) & mask;
    slots_[at] = i;
  }
}

void RepoIds::Repack() {
  std::vector<std::unique_ptr<char[]>> old = std::move(chunks_);
  std::vector<Span> spans = spans_;
  chunks_.clear();
  used_in_last_ = kChunkBytes;
  live_bytes_ = 0;
  dead_bytes_ = 0;
  for (Index i = 0; i < spans.size(); ++i) {
    if (!spans[i].live) continue;
    const Span& s = spans[i];
    spans_[i] = Store({old[s.chunk].get() + s.offset, s.length});
  }
}

}  // namespace hubwatch::schedule
