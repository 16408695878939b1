#pragma once

// JSON string literals (RFC 8259 section 7) read strictly from untrusted text: no raw control
// characters, only the JSON escapes, no lone surrogates, valid UTF-8. A string without escapes
// is handed out as a view into the text; one with escapes is decoded into a StringArena.
// JsonCursor reads its strings with ReadJsonString. Pure functions; thread-safe.

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

namespace hubwatch::diff {

// Where decoded strings live; std::deque never moves its elements, so views into them stay
// valid until the arena is destroyed (moving the arena keeps them valid too).
using StringArena = std::deque<std::string>;

// Reads the string whose contents start at text[*pos] (just after the opening quote). On
// success returns nullptr, leaves *pos just past the closing quote, and sets *out to the
// contents: a view into `text` when there are no escapes, else the decoded text, appended to
// *arena. Otherwise returns what is wrong ("unterminated string", "invalid escape in a
// string", ...) with *pos where reading stopped, at or within the offending byte or escape (an
// error message points there); *out and *arena are then untouched.
// REQUIRES: *pos <= text.size(); out and arena non-null.
const char* ReadJsonString(std::string_view text, size_t* pos, std::string_view* out,
                           StringArena* arena);

}  // namespace hubwatch::diff
