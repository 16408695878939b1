#include "estimator/base/random.h"

#include <random>

namespace hubwatch {

uint64_t SeededRandom::NextU64() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::unique_ptr<Random> MakeSystemRandom() {
  std::random_device device;
  const uint64_t seed = (static_cast<uint64_t>(device()) << 32) ^ device();
  return std::make_unique<SeededRandom>(seed);
}

}  // namespace hubwatch
