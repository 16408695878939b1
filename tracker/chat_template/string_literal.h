#pragma once

// Internal to the lexer: the contents of a string literal, decoded as @huggingface/jinja
// decodes them. Escapes: \n \t \r \b \f \v \' \" \\, and \xHH and \uHHHH, which are UTF-16
// code units (a high and a low surrogate in a row combine; a lone surrogate becomes U+FFFD).
// Every other byte is kept as it is. Not part of the engine's interface. Pure; thread-safe.

#include <cstddef>
#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::chat_template::lexer_internal {

// Decodes the literal whose contents start at s[*pos] (just after the opening `quote`) up to
// the next unescaped `quote`, and leaves *pos at that closing quote. Errors (kInvalidInput)
// carry the reference's message alone, for the lexer to prefix with the literal's position:
// "Unexpected end of input", "Invalid hexadecimal escape sequence: \u12",
// "Unexpected escaped character: q"; *pos is then unspecified.
Result<std::string> DecodeStringLiteral(std::string_view s, size_t* pos, char quote);

}  // namespace hubwatch::chat_template::lexer_internal
