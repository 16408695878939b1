#pragma once

// The model references of a pin file: one `org/name@revision` (or `org/name`, floating) per
// line, `#` comments and blank lines ignored. In a `*.hfpins` file every other line is
// reported unresolved ("not a pin"); a `models.txt` is read as a pin file only when every line
// is a pin, since the name is common for other lists. Recognised as "pinfile". Pure.

#include <string_view>

#include "daemon/audit/reference.h"

namespace hubwatch::audit {

// `strict`: the file says it is a pin file (*.hfpins).
FileFindings FindPinFileReferences(std::string_view file, std::string_view text, bool strict);

}  // namespace hubwatch::audit
