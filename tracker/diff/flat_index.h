#pragma once

// FlatIndex: an open-addressing hash index over positions 0..n-1 of a caller's array, for the
// 256k-entry vocabularies and merge lists, where a node-based std::unordered_map spends most of
// the diff in cache misses and allocations. It stores only (hash tag, position) pairs; keys stay
// in the caller's array. Not thread-safe to build; const lookups are thread-safe.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hubwatch::diff {

class FlatIndex {
 public:
  static constexpr size_t kNotFound = static_cast<size_t>(-1);

  // Indexes positions 0..n-1. hash_at(i) is the hash of key i; same(i, j) whether keys i and j
  // are equal; of equal keys the last position wins. REQUIRES: n < 2^32 - 1.
  template <class HashAt, class Same>
  FlatIndex(size_t n, HashAt hash_at, Same same) {
    size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    mask_ = capacity - 1;
    slots_.assign(capacity, 0);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t h = hash_at(i);
      for (size_t s = h & mask_;; s = (s + 1) & mask_) {
        const uint64_t slot = slots_[s];
        if (slot == 0) {
          slots_[s] = Pack(h, i);
          break;
        }
        if (Tag(slot) == Tag(Pack(h, 0)) && same(Position(slot), i)) {
          slots_[s] = Pack(h, i);
          break;
        }
      }
    }
  }

  // The position whose key has hash h and satisfies matches(position), or kNotFound.
  template <class Matches>
  size_t Find(uint64_t h, Matches matches) const {
    for (size_t s = h & mask_;; s = (s + 1) & mask_) {
      const uint64_t slot = slots_[s];
      if (slot == 0) return kNotFound;
      if (Tag(slot) == Tag(Pack(h, 0)) && matches(Position(slot))) return Position(slot);
    }
  }

 private:
  static uint64_t Pack(uint64_t h, size_t position) {
    return (h & 0xFFFFFFFF00000000ULL) | (static_cast<uint64_t>(position) + 1);
  }
  static uint64_t Tag(uint64_t slot) { return slot >> 32; }
  static size_t Position(uint64_t slot) { return static_cast<size_t>((slot & 0xFFFFFFFFULL) - 1); }

  std::vector<uint64_t> slots_;
  size_t mask_ = 0;
};

}  // namespace hubwatch::diff
