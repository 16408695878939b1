#pragma once

// Text for a terminal: everything hubwatch prints as text (log lines, the CLI's listings) goes
// through EscapeForTerminal, so that upstream strings (commit titles, file names, summaries)
// cannot move the cursor, clear the screen, recolour the output or start a fake line.
// Pure, thread-safe.

#include <string>
#include <string_view>

namespace hubwatch::diff {

// `text` with every byte a terminal could act on written as a visible escape:
//   C0 controls and DEL   \xNN: ESC is \x1b, a newline \x0a (so no line ever splits)
//   C1 controls           U+0080-U+009F as UTF-8 (C2 80 - C2 9F): \u0080 - \u009f
//   invalid UTF-8         each byte that is not part of a valid sequence: \xNN
// Everything else (printable ASCII, valid UTF-8 above U+009F) is kept. Backslashes are not
// doubled: the output is for people, and a literal "\x1b" in the input is harmless text.
// The control characters are escaped by EscapeControls (estimator/format.h), which text known
// to be valid UTF-8 (the estimator's, parsed from JSON) uses directly.
std::string EscapeForTerminal(std::string_view text);

}  // namespace hubwatch::diff
