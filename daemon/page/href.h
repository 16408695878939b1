#pragma once

// The only ways a page makes a URL: paths of this server built from validated parts, and links
// to the Hub built from a repo id that passes the Hub's rules and a 40-hex commit id. Nothing
// upstream wrote becomes a URL any other way; the renderers drop a link whose href IsSafeHref
// refuses (it is shown as text). Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace hubwatch::page {

inline constexpr const char kHubBase[] = "https://huggingface.co/";

// `text` percent-encoded for a query value (everything but A-Z a-z 0-9 - . _ ~).
std::string QueryEscape(std::string_view text);

// "/models/ns/name" for a valid repo id; "" otherwise.
std::string ModelPath(std::string_view repo);
// https://huggingface.co/ns/name and .../commit/SHA; "" when the id or the sha is not valid.
std::string HubRepoUrl(std::string_view repo);
std::string HubCommitUrl(std::string_view repo, std::string_view sha);

// An anchor id from any text: lower-case letters and digits kept, anything else '-'.
std::string Anchor(std::string_view text);

// true for a path of this server ("/...", not "//") or a Hub URL, made of URL characters only
// (no space, quote, angle bracket, backslash or control character).
bool IsSafeHref(std::string_view href);

}  // namespace hubwatch::page
