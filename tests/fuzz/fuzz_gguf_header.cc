// libFuzzer target: the GGUF metadata scanner (estimator/formats/gguf_header.h). Invariants: a
// complete scan stays within the input and its limits, names token strings only for ids inside
// the vocabulary, and gives the same metadata from exactly its own metadata_bytes; an
// incomplete one asks for more than it was given.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "estimator/formats/gguf_header.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  hubwatch::Result<hubwatch::GgufScan> scan = hubwatch::ScanGgufMetadata(bytes);
  if (!scan.ok()) {
    FUZZ_CHECK(!scan.error().message.empty(), "error without a message");
    return 0;
  }
  if (!scan->complete) {
    FUZZ_CHECK(scan->bytes_needed > size, "asked for no more than it was given");
    return 0;
  }
  const hubwatch::GgufMetadata& m = scan->metadata;
  FUZZ_CHECK(m.metadata_bytes <= size, "metadata past the input");
  FUZZ_CHECK(m.version == 2 || m.version == 3, "accepted another version");
  FUZZ_CHECK(m.kv_count <= hubwatch::kGgufMaxKeyValues, "too many pairs accepted");
  FUZZ_CHECK(m.token_count <= hubwatch::kGgufMaxArrayElements, "too many tokens accepted");
  for (const auto& [which, text] : m.special_token_text) {
    const int64_t id = m.special_token_ids.at(which);
    FUZZ_CHECK(id >= 0 && static_cast<uint64_t>(id) < m.token_count, "text of an id out of range");
  }
  hubwatch::Result<hubwatch::GgufScan> exact =
      hubwatch::ScanGgufMetadata(bytes.substr(0, m.metadata_bytes));
  FUZZ_CHECK(exact.ok() && exact->complete, "its own metadata_bytes is not enough");
  FUZZ_CHECK(exact->metadata.chat_template == m.chat_template &&
                 exact->metadata.special_token_text == m.special_token_text &&
                 exact->metadata.metadata_bytes == m.metadata_bytes,
             "the same bytes gave other metadata");
  return 0;
}
