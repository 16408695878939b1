// libFuzzer target: the safetensors header parser (estimator/safetensors_header.h). The input is
// the header JSON (and, through ParseSafetensorsHeaderOrFilePrefix, a file prefix). Invariants
// when it parses: what the header promises to validate actually holds (known dtypes, elements
// the product of the shape, byte ranges that match dtype and shape, contiguous from 0 and
// ending at data_size), and file_size is honoured exactly at its boundary.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "estimator/formats/safetensors_header.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

void CheckHeader(const hubwatch::SafetensorsHeader& header) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, t] : header.tensors) {
    FUZZ_CHECK(name != "__metadata__", "metadata parsed as a tensor");
    const std::optional<int> bits = hubwatch::SafetensorsDtypeBits(t.dtype);
    FUZZ_CHECK(bits.has_value() && *bits > 0, "accepted an unknown dtype");
    uint64_t elements = 1;
    for (int64_t d : t.shape) {
      FUZZ_CHECK(d >= 0, "negative dimension accepted");
      FUZZ_CHECK(!__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements),
                 "element count overflowed");
    }
    FUZZ_CHECK(elements == t.elements, "elements is not the product of the shape");
    FUZZ_CHECK(t.data_begin <= t.data_end, "data_offsets reversed");
    FUZZ_CHECK(t.data_end <= header.data_size, "tensor ends past data_size");
    uint64_t total_bits = 0;
    FUZZ_CHECK(!__builtin_mul_overflow(elements, static_cast<uint64_t>(*bits), &total_bits),
               "bit count overflowed");
    FUZZ_CHECK(total_bits % 8 == 0 && t.data_end - t.data_begin == total_bits / 8,
               "byte range does not match dtype and shape");
    ranges.emplace_back(t.data_begin, t.data_end);
  }
  std::sort(ranges.begin(), ranges.end());
  uint64_t at = 0;
  for (const auto& [begin, end] : ranges) {
    FUZZ_CHECK(begin == at, "gap or overlap between tensors");
    at = end;
  }
  FUZZ_CHECK(at == header.data_size, "data_size is not the end of the last tensor");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  hubwatch::Result<hubwatch::SafetensorsHeader> parsed = hubwatch::ParseSafetensorsHeader(bytes);
  if (parsed.ok()) {
    CheckHeader(*parsed);
    // The data region must fit the file: exactly at the boundary yes, one byte short no.
    const uint64_t needed = 8 + size + parsed->data_size;
    FUZZ_CHECK(hubwatch::ParseSafetensorsHeader(bytes, needed).ok(),
               "rejected a file exactly large enough");
    FUZZ_CHECK(!hubwatch::ParseSafetensorsHeader(bytes, needed - 1).ok(),
               "accepted a file one byte too small");
  } else {
    FUZZ_CHECK(!parsed.error().message.empty(), "error without a message");
  }

  if (size >= 8) {
    hubwatch::Result<uint64_t> length = hubwatch::ReadSafetensorsHeaderLength(bytes, 1 << 20);
    if (length.ok()) FUZZ_CHECK(*length >= 2 && *length <= (1 << 20), "length out of bounds");
  }

  hubwatch::Result<hubwatch::SafetensorsHeader> either =
      hubwatch::ParseSafetensorsHeaderOrFilePrefix(bytes);
  if (either.ok()) CheckHeader(*either);
  return 0;
}
