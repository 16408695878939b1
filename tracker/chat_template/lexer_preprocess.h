#pragma once

// Internal to the lexer: the source as the lexer reads it, after the transformations that
// @huggingface/jinja (with transformers' options) applies before tokenizing - the template's
// trailing newline dropped, lstrip_blocks, trim_blocks, and the generation tags removed - with,
// for every byte left, its offset in the original source (for error positions). Not part of the
// engine's interface. Pure; thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::chat_template::lexer_internal {

// Text with, for every byte, its offset in the original source.
struct Mapped {
  std::string text;
  std::vector<uint32_t> origin;

  // Appends from.text[begin, end) with its offsets.
  void Append(const Mapped& from, size_t begin, size_t end);
};

// The source as the lexer reads it.
Mapped Preprocess(std::string_view source);

// Length of the JS whitespace code point at s[i], or 0.
size_t WhitespaceAt(std::string_view s, size_t i);

}  // namespace hubwatch::chat_template::lexer_internal
