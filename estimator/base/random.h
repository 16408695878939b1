#pragma once

// The randomness seam (backoff jitter, the spread of polls). Tests pass a SeededRandom so that
// schedules repeat.

#include <cstdint>
#include <memory>

namespace hubwatch {

// Thread safety: not thread-safe; one per event loop.
class Random {
 public:
  virtual ~Random() = default;
  virtual uint64_t NextU64() = 0;
  // Uniform in [0, 1).
  double NextUnit() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }
};

// splitmix64: deterministic for a given seed.
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t NextU64() override;

 private:
  uint64_t state_;
};

// Seeded from std::random_device.
std::unique_ptr<Random> MakeSystemRandom();

}  // namespace hubwatch
