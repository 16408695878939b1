#pragma once

// Shell-like command lines split into words, for scripts, Dockerfiles and Makefiles alike:
// quotes removed, `\` line continuations joined, comments dropped, commands cut at newlines,
// `;`, `&&`, `||`, `|`, `&` and `$(`. Each word keeps the line and column where it starts.
// Not a shell: no expansion, no here-documents. One forward pass; any bytes in.

#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::audit {

struct ShellWord {
  std::string text;  // quotes removed
  int line = 1;      // 1-based
  int column = 1;    // 1-based, in bytes
  int length = 0;    // the bytes it takes from `column`, quotes included; 0: it crosses lines
};

using ShellCommand = std::vector<ShellWord>;

std::vector<ShellCommand> SplitShellCommands(std::string_view text);

}  // namespace hubwatch::audit
