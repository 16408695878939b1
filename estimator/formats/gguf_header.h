#pragma once

// The metadata of a GGUF file (llama.cpp's format) as a derivative check needs it, read from
// a prefix of the file: the tokenizer's chat templates, special-token ids and their strings, the
// add-BOS/EOS flags, the architecture. Never the tensors.
//
// A GGUF file is: "GGUF", a u32 version, u64 tensor and key-value counts, the key-value pairs
// (u64-length key, u32 type, value), the tensor infos, padding, the data. All little-endian.
// The chat template sits after the token and merge arrays, megabytes in, so a reader fetches a
// prefix, scans it, and fetches more when the scan says how much it needs (kNeedMore).
//
// Untrusted input: versions 2 and 3 only; a byte-swapped (big-endian) file, nested arrays, a
// bool other than 0/1, a duplicate key, or a length past the limits below is an Error naming
// the key and the offset. Every length is checked against the bytes present before it is used.
// Pure functions, thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch {

// Limits (those of @huggingface/gguf, the Hub's own reader).
inline constexpr uint64_t kGgufMaxKeyValues = 100'000;
inline constexpr uint64_t kGgufMaxArrayElements = 1'000'000;
inline constexpr uint64_t kGgufMaxStringBytes = 10'000'000;
inline constexpr uint64_t kGgufMaxKeyBytes = 65'535;

struct GgufMetadata {
  uint32_t version = 0;
  uint64_t tensor_count = 0;
  uint64_t kv_count = 0;
  uint64_t metadata_bytes = 0;  // from the file's start through its last key-value pair
  std::string architecture;     // general.architecture
  std::string type;             // general.type: "model", "adapter", ... ("" when absent)
  std::string name;             // general.name
  std::string tokenizer_model;  // tokenizer.ggml.model: "llama", "gpt2", ...
  std::string tokenizer_pre;    // tokenizer.ggml.pre
  uint64_t token_count = 0;     // elements of tokenizer.ggml.tokens
  std::optional<std::string> chat_template;                 // tokenizer.chat_template
  std::map<std::string, std::string> named_chat_templates;  // tokenizer.chat_template.{name}
  // tokenizer.ggml.{bos,eos,eot,eom,padding,unknown}_token_id, by "bos", "eos", ...
  std::map<std::string, int64_t> special_token_ids;
  // The token string at each of those ids, when tokenizer.ggml.tokens has it.
  std::map<std::string, std::string> special_token_text;
  std::optional<bool> add_bos_token;  // tokenizer.ggml.add_bos_token
  std::optional<bool> add_eos_token;
};

struct GgufScan {
  bool complete = false;      // every key-value pair was in the prefix: `metadata` is whole
  uint64_t bytes_needed = 0;  // when not complete: a prefix at least this long gets further
  GgufMetadata metadata;      // when complete
};

// Scans the key-value section of a GGUF file from `prefix`, the file's first bytes.
Result<GgufScan> ScanGgufMetadata(std::string_view prefix);

}  // namespace hubwatch
