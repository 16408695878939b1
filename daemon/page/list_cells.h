#pragma once

// The cells the list pages share (index_page.cc, list_pages.cc): a model's link, a change
// kind as words, a day. Internal to daemon/page. Pure functions; thread-safe.

#include <cstdint>
#include <string>

#include "daemon/page/document.h"
#include "tracker/diff/change.h"

namespace hubwatch::page {

// The repo id linked to its page (plain text when the id is not valid).
Spans RepoLink(const std::string& repo);
// "chat template" for chat_template.
std::string KindText(diff::ChangeKind kind);
// "2024-06-01" of a Unix time; "" for 0 or less.
std::string When(int64_t unix_seconds);

}  // namespace hubwatch::page
