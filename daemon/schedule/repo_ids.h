#pragma once

// RepoIds: repo ids interned as small integers, for per-repo tables that must stay small at
// 100,000 repos (issue 33). An id's text is kept once, packed in large chunks (no allocation per
// id), and found through an open-addressing hash table of 4-byte slots: about 30 bytes per repo
// for a 22-character id, against about 110 for a std::map<std::string, ...> node and its string.
//
// An index stays valid from Intern until Release; a released index is reused by a later Intern.
// The text of released ids is reclaimed when it outweighs the live text (Release repacks).
// Name() views stay valid until the next Intern or Release; a released index's name is empty
// (never a view into reclaimed text).
//
// Thread safety: none (a value type; the scheduler's, on the network thread).

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace hubwatch::schedule {

class RepoIds {
 public:
  using Index = uint32_t;

  // The index of `id`, added when new. REQUIRES: id shorter than 64 KiB.
  Index Intern(std::string_view id);
  std::optional<Index> Find(std::string_view id) const;
  // Forgets the id at `i`. REQUIRES: `i` is live.
  void Release(Index i);

  std::string_view Name(Index i) const {
    const Span& s = spans_[i];
    if (s.length == 0) return {};
    return {chunks_[s.chunk].get() + s.offset, s.length};
  }
  bool live(Index i) const { return i < spans_.size() && spans_[i].live; }
  size_t size() const { return live_; }
  // One past the largest index handed out: live indexes are below it.
  Index end() const { return static_cast<Index>(spans_.size()); }

 private:
  struct Span {
    uint32_t chunk = 0;
    uint32_t offset = 0;
    uint16_t length = 0;
    bool live = false;
  };
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static constexpr uint32_t kGone = UINT32_MAX - 1;  // a released id's slot (tombstone)
  static constexpr size_t kChunkBytes = 64 * 1024;

  static uint64_t Hash(std::string_view id);
  // The slot holding `id`, or where it would go (the first empty or tombstone on its probe).
  size_t Probe(std::string_view id, bool* found) const;
  // Copies `id` into the chunks; where it went.
  Span Store(std::string_view id);
  // A table of `capacity` slots (a power of two) holding every live index.
  void Rehash(size_t capacity);
  // Rewrites the live ids into fresh chunks, dropping the released ones' text.
  void Repack();

  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t used_in_last_ = kChunkBytes;  // bytes used in chunks_.back()
  size_t live_bytes_ = 0;
  size_t dead_bytes_ = 0;
  std::vector<Span> spans_;      // by index
  std::vector<Index> free_;      // released indexes, reused first
  std::vector<uint32_t> slots_;  // index, kEmpty or kGone
  size_t live_ = 0;
  size_t gone_ = 0;  // tombstones in slots_
};

}  // namespace hubwatch::schedule
