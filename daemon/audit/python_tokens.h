#pragma once

// A Python tokenizer just deep enough for discovery: names, string literals (with their
// prefixes, triple quotes and escapes), numbers, operators and logical line ends, with comments
// dropped. One forward pass, no backtracking and no recursion, so a 1 MiB single-line file or
// an unterminated string costs linear time and constant stack. Any bytes in, never fails.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::audit {

struct PyToken {
  enum class Kind : uint8_t { kName, kString, kNumber, kOp, kNewline };
  Kind kind = Kind::kOp;
  bool f_string = false;  // kString: an f-string (its value is computed)
  bool raw = false;       // kString: r"..." (backslashes are literal)
  uint32_t offset = 0;    // of the token's first byte (a string's prefix) in the source
  uint32_t length = 0;
  uint32_t body_offset = 0;  // kString: the bytes between the quotes
  uint32_t body_length = 0;
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in bytes
};

// The tokens of `source` (a logical kNewline ends each statement, none inside brackets).
// REQUIRES: source.size() < 4 GiB.
std::vector<PyToken> TokenizePython(std::string_view source);

// A kString token's value: the body with the common escapes decoded (unless raw). An escape
// it does not decode (\N{...}, \x, octal) is kept as written, which no repo id can contain.
std::string PyStringValue(std::string_view source, const PyToken& token);

inline std::string_view PyText(std::string_view source, const PyToken& token) {
  return source.substr(token.offset, token.length);
}

}  // namespace hubwatch::audit
