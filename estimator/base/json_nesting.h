#pragma once

// A guard run before parsing untrusted JSON (API bodies, Hub responses, config.json, safetensors
// headers). nlohmann builds one heap node per nested array or object, so a 4 MiB body of '['
// costs about 300 MB and 0.6 s before the parser finds it malformed; real documents nest a few
// levels. The scan is linear, allocates nothing, and leaves malformed text to the parser.

#include <cstddef>
#include <string_view>

namespace hubwatch {

// Far deeper than what the guarded documents nest (the Hub API's answers, configs and
// safetensors headers: a few levels).
inline constexpr size_t kMaxJsonNesting = 64;

// True when arrays and objects in `text`, counted outside strings, nest deeper than max_depth.
bool JsonNestsDeeperThan(std::string_view text, size_t max_depth = kMaxJsonNesting);

// True when `text` holds more than max_values values (array elements, object members, arrays
// and objects), counted outside strings as commas plus opening brackets. Each value costs the
// parser 16 bytes and a member ~100 (a map node and its key), so a 4 MiB body of "0,0,0,..."
// would cost ~50 MB parsed; bodies that only ever hold a few thousand values are held to that.
bool JsonHasMoreValuesThan(std::string_view text, size_t max_values);

// True when the outermost array or object of `text` has more than max_members elements or
// members (commas at depth 1, counted outside strings, plus one). For documents whose size is
// their member count: a safetensors header's tensors.
bool JsonHasMoreTopLevelMembersThan(std::string_view text, size_t max_members);

}  // namespace hubwatch
