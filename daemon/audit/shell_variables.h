#pragma once

// ShellVariables: what a script's variables hold at each point of one forward pass, for the
// shell reader (shell_references.h). Literal assignments are recorded in order; an assignment
// inside a conditional or repeated block (if/elif/else, case arms, while/until/for/select
// bodies, `{ ... }` groups and function bodies, make's ifeq/ifdef blocks) holds only inside that
// branch: once the branch closes, a variable it set to anything other than the value it had
// before is "assigned in a conditional branch" and reads as computed, never as one of its
// values. Control keywords are read at the start of each command. No recursion; any input.
// Not thread-safe.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/shell_words.h"

namespace hubwatch::audit {

// [A-Za-z_][A-Za-z0-9_]*
bool IsShellVariableName(std::string_view s);

class ShellVariables {
 public:
  // Reads the control keywords that open, switch or close a branch at the start of `command`
  // (`if`, `then`, `else`, `fi`, `do`, `done`, `case`, an arm's `pattern)`, `esac`, `{`, `}`,
  // `f() {`, make's `ifeq` ... `endif`) and removes them, leaving the command they lead.
  void ReadKeywords(ShellCommand& command);

  // NAME=value in the current branch; `value` is a word as written (it may hold `$X`), in the
  // source at `span` (the word that assigns it).
  void Assign(std::string_view name, std::string_view value, SourceSpan span = {});

  // What a word holds: a literal, a literal default (${X:-v}), a variable's value, or why not.
  // A literal read from the word itself is written at `span` (the word's place).
  SourceValue Value(std::string_view word, SourceSpan span = {}) const;

 private:
  struct Variable {
    SourceValue value;
    size_t serial = 0;  // the innermost open branch that assigned it (0: none)
  };
  // A variable assigned in an open branch: what it held before, and the branch that had
  // assigned it before this one (an ancestor, or 0).
  struct Assigned {
    size_t serial;
    std::string name;
    SourceValue before;
    size_t previous;
  };
  struct Branch {
    size_t serial;
    bool is_case;
  };

  void Open(bool is_case);
  void Switch();  // then / else / elif / do / a case arm: the next branch of the same block
  void Close();
  void EndBranch();  // what the branch on top set becomes uncertain in its parent

  std::unordered_map<std::string, Variable> variables_;
  std::vector<Branch> branches_;
  std::vector<Assigned> assigned_;  // a stack: inner branches' entries on top
  size_t next_serial_ = 1;
};

}  // namespace hubwatch::audit
