#pragma once

// A synthetic byte-level BPE tokenizer.json of any size, written the way the tokenizers library
// writes it (2-space indent, one vocab entry per line, merges as ["a", "b"] pairs), for the
// tokenizer benchmark and the large-file tests. Deterministic for a given spec.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace hubwatch::testing {

struct SyntheticTokenizerSpec {
  size_t vocab_size = 256'000;
  size_t merges = 220'000;  // with the default vocab: 17.3 MB, the size of a 256k-token Gemma file
  uint32_t seed = 1;
  // Edits relative to the spec with the same seed.
  size_t tokens_appended = 0;    // new tokens at ids vocab_size..
  size_t tokens_renumbered = 0;  // pairs of tokens with swapped ids
  size_t merges_appended = 0;
  bool bos_template = false;  // post_processor adds <bos>
};

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::string SyntheticTokenizerJson(const SyntheticTokenizerSpec& spec) {
  std::mt19937 rng(spec.seed);
  static const std::vector<std::string> kPieces = {
      "\xc4\xa0", "a", "b", "c", "d", "e", "f", "g", "h",        "i", "k", "l", "m", "n",
      "o",        "p", "r", "s", "t", "u", "w", "y", "\xc4\x8a", "1", "2", "_", "'", "x"};
  // JSON escapes are rare in real vocabularies (tokens holding '"' or '\\'): 1 piece in 256.
  static const std::vector<std::string> kEscapes = {"\\\"", "\\\\", "\\u00e9"};
  std::vector<std::string> tokens;
  std::unordered_set<std::string> seen;
  const size_t total = spec.vocab_size + spec.tokens_appended;
  tokens.reserve(total);
  while (tokens.size() < total) {
    std::string token;
    const size_t length = 1 + rng() % 7;
    for (size_t i = 0; i < length; ++i) {
      const uint32_t r = rng();
      token += (r & 0xFF) == 0 ? kEscapes[(r >> 8) % kEscapes.size()]
                               : kPieces[(r >> 8) % kPieces.size()];
    }
    if (seen.insert(token).second) tokens.push_back(std::move(token));
  }
  std::vector<size_t> ids(total);
  for (size_t i = 0; i < total; ++i) ids[i] = i;
  for (size_t i = 0; i < spec.tokens_renumbered; ++i) std::swap(ids[2 * i], ids[2 * i + 1]);

  std::string out;
  out.reserve(total * 28 + (spec.merges + spec.merges_appended) * 44 + 4096);
  out += "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n";
  out += "  \"added_tokens\": [\n";
  for (int i = 0; i < 256; ++i) {
    out += "    {\n      \"id\": " + std::to_string(spec.vocab_size + 100'000 + i) +
           ",\n      \"content\": \"<|reserved_" + std::to_string(i) +
           "|>\",\n      \"single_word\": false,\n      \"lstrip\": false,\n      \"rstrip\": "
           "false,\n      \"normalized\": false,\n      \"special\": true\n    }" +
           (i == 255 ? "\n" : ",\n");
  }
  out += "  ],\n  \"normalizer\": null,\n";
  out +=
      "  \"pre_tokenizer\": {\n    \"type\": \"ByteLevel\",\n    \"add_prefix_space\": false,\n"
      "    \"trim_offsets\": true,\n    \"use_regex\": true\n  },\n";
  if (spec.bos_template) {
    out +=
        "  \"post_processor\": {\n    \"type\": \"TemplateProcessing\",\n    \"single\": [\n"
        "      {\"SpecialToken\": {\"id\": \"<|reserved_0|>\", \"type_id\": 0}},\n"
        "      {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}\n    ],\n    \"pair\": [],\n"
        "    \"special_tokens\": {}\n  },\n";
  } else {
    out +=
        "  \"post_processor\": {\n    \"type\": \"ByteLevel\",\n    \"add_prefix_space\": true,\n"
        "    \"trim_offsets\": false,\n    \"use_regex\": true\n  },\n";
  }
  out +=
      "  \"decoder\": {\n    \"type\": \"ByteLevel\",\n    \"add_prefix_space\": true,\n"
      "    \"trim_offsets\": true,\n    \"use_regex\": true\n  },\n";
  out +=
      "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": null,\n"
      "    \"continuing_subword_prefix\": null,\n    \"end_of_word_suffix\": null,\n"
      "    \"fuse_unk\": false,\n    \"byte_fallback\": false,\n    \"ignore_merges\": true,\n"
      "    \"vocab\": {\n";
  for (size_t i = 0; i < total; ++i) {
    out +=
        "      \"" + tokens[i] + "\": " + std::to_string(ids[i]) + (i + 1 == total ? "\n" : ",\n");
  }
  out += "    },\n    \"merges\": [\n";
  const size_t merges = spec.merges + spec.merges_appended;
  for (size_t i = 0; i < merges; ++i) {
    // Merge i joins two earlier tokens; deterministic in i so that appending keeps the prefix.
    const uint64_t pick = SplitMix64(i * 2 + spec.seed);
    const std::string& a = tokens[(pick & 0xFFFFFFFF) % spec.vocab_size];
    const std::string& b = tokens[(pick >> 32) % spec.vocab_size];
    out += "      [\n        \"" + a + "\",\n        \"" + b + "\"\n      ]" +
           (i + 1 == merges ? "\n" : ",\n");
  }
  out += "    ]\n  }\n}\n";
  return out;
}

}  // namespace hubwatch::testing
