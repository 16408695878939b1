#pragma once

// The model references of a pin file: one `org/name@revision` (or `org/name`, floating) per
// line, `#` comments and blank lines ignored. In a `*.hfpins` file every other line is
// reported unresolved ("not a pin", with why and the entry quoted); a `models.txt`, a name
// common for other lists, is read as a pin file only when most of its entries are pins (then
// its other lines are reported as in a `*.hfpins`), else nothing is read from it. Recognised as
// "pinfile". Pure.

#include <string_view>

#include "daemon/audit/reference.h"

namespace hubwatch::audit {

// `strict`: the file says it is a pin file (*.hfpins).
FileFindings FindPinFileReferences(std::string_view file, std::string_view text, bool strict);

}  // namespace hubwatch::audit
