#pragma once

// Text for XML documents (the Atom feed, the SVG badge): always well-formed, whatever bytes
// the store holds. Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace hubwatch::api {

// `text` as XML character data or attribute value: invalid UTF-8 becomes U+FFFD, characters
// XML 1.0 forbids (C0 controls other than tab, LF, CR) are dropped, and & < > " ' are escaped.
std::string XmlEscape(std::string_view text);

}  // namespace hubwatch::api
