#pragma once

// Text that may hold what upstream wrote (config values, tensor names, commit titles) made safe
// for a message, a log line or a terminal: clipped to a bounded length at a UTF-8 boundary,
// quoted by size when it is a list, control characters escaped. Pure functions.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace hubwatch {

// 9241705984 -> "9,241,705,984"
std::string Grouped(uint64_t value);

// How much of an upstream value a message quotes.
inline constexpr size_t kMaxQuotedBytes = 80;

// `text` when it is at most `max_bytes` long, else its first bytes up to a UTF-8 character
// boundary followed by "...". Valid UTF-8 in, valid UTF-8 out.
std::string Clip(std::string_view text, size_t max_bytes = kMaxQuotedBytes);

// Bytes as lower-case hex, two digits each ("\x1f\xa0" -> "1fa0").
std::string HexLower(std::string_view bytes);

// A JSON value as a message quotes it: scalars as JSON text (clipped), arrays and objects by
// their size ("an array of 1,400,000 values"), so quoting never costs more than the limit.
std::string QuoteJson(const nlohmann::json& value);

// `text` with every control character (C0, DEL, and C1 encoded in UTF-8) and every bidi control
// (see BidiControlAt) written as a visible escape ("\x1b", "\u009b", "\u202e"), so that it
// cannot move the cursor, recolour a terminal or reorder what a reader sees.
std::string EscapeControls(std::string_view text);

// The code point of the Unicode bidirectional control character whose UTF-8 encoding starts at
// text[i], or 0: the embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the
// marks (U+200E, U+200F, U+061C). Upstream text carrying them can display in another order
// than it is stored ("Trojan Source", CVE-2021-42574), so every renderer shows them as escapes.
// The encoding is 3 bytes (2 for U+061C): see BidiControlLength.
uint32_t BidiControlAt(std::string_view text, size_t i);
inline size_t BidiControlLength(uint32_t code_point) { return code_point == 0x061C ? 2 : 3; }

// A library's message that may echo raw input (nlohmann's parse errors quote the bytes they
// stopped at, which need not be UTF-8): clipped, with every byte outside printable ASCII
// written as "\xNN". Safe in JSON, in a log line and on a terminal.
std::string EchoSafe(std::string_view text, size_t max_bytes = 2 * kMaxQuotedBytes);

}  // namespace hubwatch
