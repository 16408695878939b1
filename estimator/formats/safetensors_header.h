#pragma once

// The header of a .safetensors file: tensor name -> dtype, shape, byte range.
//
// A safetensors file is: 8 bytes little-endian N, then N bytes of JSON (the header), then the
// data region. Each header entry other than "__metadata__" is
//   {"dtype": "BF16", "shape": [3584, 14336], "data_offsets": [begin, end]}
// with offsets relative to the start of the data region. "__metadata__", when present, maps
// strings to strings.
//
// ParseSafetensorsHeader validates what the format requires: a JSON object; known dtypes;
// non-negative integer shapes; end - begin == elements * dtype size (sub-byte dtypes packed);
// offsets contiguous from 0 with no gaps or overlaps (in offset order); __metadata__ values all
// strings; at most kMaxSafetensorsTensors tensors (counted before parsing). Untrusted input: never crashes, every failure is an Error naming the tensor and what
// is wrong. Pure functions, thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch {

struct SafetensorsTensor {
  std::string dtype;           // as written: "BF16", "F32", "F8_E4M3", ...
  std::vector<int64_t> shape;  // [] for a scalar
  uint64_t data_begin = 0;     // byte offsets into the data region
  uint64_t data_end = 0;
  uint64_t elements = 1;  // product of shape
};

struct SafetensorsHeader {
  std::map<std::string, SafetensorsTensor> tensors;  // by tensor name
  std::map<std::string, std::string> metadata;       // __metadata__
  uint64_t data_size = 0;                            // bytes of the data region the header covers
};

// Size limits. The Hub's own clients refuse headers over 25,000,000 bytes; we never accept more
// than 100,000,000 whatever the configuration says.
inline constexpr uint64_t kDefaultMaxSafetensorsHeaderBytes = 25'000'000;
inline constexpr uint64_t kHardMaxSafetensorsHeaderBytes = 100'000'000;
// Tensors in one header, and in one checkpoint's shards together. The largest released
// checkpoints hold ~140,000 (Kimi-K2's FP8 experts with their scales: 61 layers x 384 experts x
// 6); 100 MB of one-element tensors would be ~1,800,000, each costing the parser a map node.
inline constexpr size_t kMaxSafetensorsTensors = 400'000;

// Bits per element of a safetensors dtype ("BF16" -> 16, "F4" -> 4); nullopt if unknown.
std::optional<int> SafetensorsDtypeBits(std::string_view dtype);

// Reads the 8-byte little-endian header length at the start of a file.
// REQUIRES: prefix.size() >= 8. Errors when the length exceeds max_header_bytes (capped at
// kHardMaxSafetensorsHeaderBytes) or is < 2.
Result<uint64_t> ReadSafetensorsHeaderLength(
    std::string_view prefix, uint64_t max_header_bytes = kDefaultMaxSafetensorsHeaderBytes);

// Parses and validates the JSON header bytes (without the 8-byte length prefix). Trailing
// spaces, which writers use as padding, are allowed. When file_size is given, the data region
// must fit in it: 8 + header_json.size() + data_size <= file_size.
Result<SafetensorsHeader> ParseSafetensorsHeader(std::string_view header_json,
                                                 std::optional<uint64_t> file_size = std::nullopt);

// Accepts either a raw JSON header or the start of a .safetensors file (8-byte length, JSON, ...)
// as a local file holds it, and parses it. For `hubwatch estimate --safetensors-header`.
Result<SafetensorsHeader> ParseSafetensorsHeaderOrFilePrefix(std::string_view bytes);

}  // namespace hubwatch
