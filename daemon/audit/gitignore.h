#pragma once

// The rules of one .gitignore file, for the patterns projects use: `*.ext`, `name`, `dir/`,
// `/anchored`, `a/b`, `**/x`, `x/**`, `a/**/b`, `!negation`, `?`, `[a-z]`, `\` escapes and
// `#` comments. Matching is linear in the path and pattern for each rule (no backtracking
// blow-up: at most one `*` and one `**` are revisited), and a file holds at most
// kMaxIgnoreRules rules. Immutable after Parse; safe to share between threads.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::audit {

inline constexpr size_t kMaxIgnoreRules = 2000;

class IgnoreRules {
 public:
  enum class Verdict { kNoMatch, kIgnore, kInclude };

  static IgnoreRules Parse(std::string_view text);

  // The verdict of the last rule that matches `path` (relative to the .gitignore's directory,
  // '/'-separated, no leading or trailing '/'), or kNoMatch.
  Verdict Match(std::string_view path, bool is_directory) const;

  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    std::vector<std::string> segments;  // the pattern split at '/'
    bool negate = false;
    bool directory_only = false;
    bool basename_only = false;  // no '/' in the pattern: matches the last component anywhere
  };
  std::vector<Rule> rules_;
};

// One component of a path against one segment of a pattern (`*`, `?`, `[...]`, `\x`).
bool GlobMatchSegment(std::string_view pattern, std::string_view name);

}  // namespace hubwatch::audit
