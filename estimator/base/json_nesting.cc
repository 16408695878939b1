#include "estimator/base/json_nesting.h"

namespace hubwatch {

namespace {

// Calls on_structural(c) for every byte of `text` outside strings; stops when it returns true.
// Returns whether it stopped.
template <class OnStructural>
bool ScanOutsideStrings(std::string_view text, OnStructural on_structural) {
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (on_structural(c)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool JsonNestsDeeperThan(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  return ScanOutsideStrings(text, [&](char c) {
    if (c == '[' || c == '{') return ++depth > max_depth;
    if ((c == ']' || c == '}') && depth > 0) --depth;
    return false;
  });
}

bool JsonHasMoreValuesThan(std::string_view text, size_t max_values) {
  size_t values = 1;
  return ScanOutsideStrings(text, [&](char c) {
    if (c == ',' || c == '[' || c == '{') return ++values > max_values;
    return false;
  });
}

bool JsonHasMoreTopLevelMembersThan(std::string_view text, size_t max_members) {
  size_t depth = 0;
  size_t members = 1;
  return ScanOutsideStrings(text, [&](char c) {
    if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 1) {
      return ++members > max_members;
    }
    return false;
  });
}

}  // namespace hubwatch
