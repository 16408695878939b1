#pragma once

// Unified line diff, as `diff -u` prints it: "--- before" / "+++ after" headers, then hunks
// "@@ -a,b +c,d @@" (",1" left out, an empty range written "a,0" with a the line before it)
// holding `context` unchanged lines around each run of changes, hunks closer than 2 * context
// merged, and "\ No newline at end of file" after a last line without one. The edit script is
// a shortest one (Myers) for up to kMaxEditDistance edits between the trimmed common prefix and
// suffix; beyond that the middle is shown as removed-then-added, still a correct diff. Pure,
// thread-safe.

#include <cstddef>
#include <string>
#include <string_view>

namespace hubwatch::diff {

inline constexpr size_t kMaxEditDistance = 1000;

struct UnifiedDiff {
  std::string text;  // empty when the texts are equal
  size_t lines_added = 0;
  size_t lines_removed = 0;
  size_t hunks = 0;
  std::string first_added;    // the first added line (no newline), or empty
  std::string first_removed;  // the first removed line
};

UnifiedDiff DiffLines(std::string_view before, std::string_view after,
                      std::string_view before_label, std::string_view after_label,
                      size_t context = 3);

}  // namespace hubwatch::diff
