#pragma once

// Line-based unified diff (the `diff -u` format) of two texts.
//
// Pure; thread-safe.

#include <string>
#include <string_view>

namespace hubwatch::chat_template {

// Returns the unified diff of before -> after with `context` lines of context, headed
// "--- <before_label>" / "+++ <after_label>"; empty when the texts are equal. A last line
// without a newline is marked "\ No newline at end of file", as diff does. Very large edit
// distances (more than 1000 differing lines) are shown as one hunk replacing everything.
std::string UnifiedDiff(std::string_view before, std::string_view after,
                        std::string_view before_label, std::string_view after_label,
                        int context = 3);

}  // namespace hubwatch::chat_template
