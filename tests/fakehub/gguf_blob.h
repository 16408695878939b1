#pragma once

// GGUF fixture files: a manifest (format: tests/fixtures/hub/README.md, "GGUF manifests")
// synthesized into the exact bytes a GGUF v3 little-endian file starts with - "GGUF", version,
// tensor and key-value counts, the key-value pairs in manifest order, the tensor infos, padding
// to general.alignment (32 when absent) - followed by a virtual data region (deterministic bytes
// from `seed`, never stored) holding each tensor at its aligned offset. Making the blob checks
// the manifest and counts the prefix's bytes; the prefix itself - megabytes of generated arrays
// (a 128,256-token vocabulary, its token types, the merges) - is built once, by the first read
// that reaches it. Blobs of the same manifest text are shared within a process (a test suite
// starting hub after hub builds each prefix once).
//
// Thread-safe; the blob is immutable.

#include <cstdint>
#include <optional>
#include <string_view>

#include "estimator/base/result.h"
#include "tests/fakehub/repo_model.h"

namespace hubwatch::fakehub {

// Bytes of `elements` elements of ggml tensor type `type` (F32 0, F16 1, Q4_0 2, ..., Q4_K 12,
// Q6_K 14, BF16 30); nullopt for a type fakehub does not know or a count that is not a whole
// number of the type's blocks.
std::optional<uint64_t> GgmlTensorBytes(uint32_t type, uint64_t elements);

// Synthesizes the blob from a manifest's JSON text. Errors name the key or tensor at fault: an
// unknown value or tensor type, a value out of its type's range, a duplicate key, a declared
// `size` that differs from the one the manifest makes, a sha256 that is not 64 lower-case hex.
Result<BlobPtr> MakeGgufBlob(std::string_view manifest_json);

}  // namespace hubwatch::fakehub
