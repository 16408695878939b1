#pragma once

// The hubwatch subcommands. Each takes its arguments (after the subcommand name) and the streams
// to write to, and returns the process exit code: 0 success, 2 bad input or usage, 1 other
// failure. Commands never call exit(); main() owns the process.

#include <iosfwd>
#include <string>
#include <vector>

namespace hubwatch::cli {

using Args = std::vector<std::string>;

// hubwatch estimate CONFIG.json [options]: parameter counts, memory, fit and cost.
int RunEstimate(const Args& args, std::ostream& out, std::ostream& err);

// hubwatch chat-template render --template FILE --conversation FILE.json: the rendered prompt.
int RunChatTemplate(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace hubwatch::cli
