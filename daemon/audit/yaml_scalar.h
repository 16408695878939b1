#pragma once

// The scalar pieces both YAML readers share (config_references.cc, yaml_args.cc): trailing
// blanks, a quoted scalar ('single' with '' for a quote, "double" with backslash escapes), and
// a plain or quoted value with its comment dropped. Pure functions.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace hubwatch::audit {

// `s` without trailing spaces, tabs and '\r'.
std::string_view TrimRight(std::string_view s);

// The quoted scalar starting at s[0] ('"' or '\''): its value and the bytes it takes (0 when
// the quote does not close on this line). REQUIRES: !s.empty().
std::pair<std::string, size_t> Unquote(std::string_view s);

// A plain or quoted scalar value from `s` (after "key:" or "key ="), a " #" comment dropped.
std::string ScalarValue(std::string_view s);

}  // namespace hubwatch::audit
