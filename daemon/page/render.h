#pragma once

// The two renderings of a Document: an HTML5 page (one stylesheet of ours at kStylesheetPath, no
// script, no external resource) and its Markdown twin, with the same sections in the same order.
// Every string is escaped for its context (escape.h); a link whose href IsSafeHref refuses is
// shown as its text. Pure functions; thread-safe.

#include <string>

#include "daemon/page/document.h"

namespace hubwatch::page {

inline constexpr const char kStylesheetPath[] = "/page.css";

std::string RenderHtml(const Document& doc);
std::string RenderMarkdown(const Document& doc);

}  // namespace hubwatch::page
