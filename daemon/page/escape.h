#pragma once

// Escaping for the page renderers, one function per context. Whatever bytes upstream wrote,
// the output is valid UTF-8 without the control characters HTML forbids: invalid UTF-8 and C0
// controls other than tab and line feed (CR, NUL, ESC...) and DEL become U+FFFD, and the bidi
// controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) are shown as the text
// "\u202e" so that upstream text cannot reorder what a reader sees. Pure functions;
// thread-safe.

#include <string>
#include <string_view>

namespace hubwatch::page {

// HTML text and attribute values (always double-quoted by the renderers): & < > " ' escaped.
void AppendHtml(std::string& out, std::string_view text);
std::string Html(std::string_view text);

// Markdown inline text: as AppendHtml (CommonMark decodes the entities, and raw HTML never
// starts), plus a backslash before every other character Markdown gives a meaning to
// (\ ` * _ [ ] ( ) # + - ! | ~ { }), and line breaks become spaces (`keep_newlines`: kept).
void AppendMarkdown(std::string& out, std::string_view text, bool keep_newlines = false);

// `text` cleaned as above (U+FFFD for what HTML forbids) without any escaping: for code blocks
// in Markdown, whose fence is chosen longer than any backtick run in the text.
std::string CleanText(std::string_view text);

// The longest run of `c` in `text`.
size_t LongestRun(std::string_view text, char c);

}  // namespace hubwatch::page
