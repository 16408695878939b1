#pragma once

// The HTTP Link header (RFC 8288) as the Hub sends it for pagination:
//   Link: <https://huggingface.co/api/models/x/commits/main?p=1&limit=50>; rel="next"
// Pure functions.

#include <optional>
#include <string>
#include <string_view>

namespace hubwatch::hub {

// The target of the first link whose rel (a space-separated list, quoted or not) holds `rel`,
// as written: absolute or relative. Resolve it against the request URL before use.
std::optional<std::string> FindLinkTarget(std::string_view link_header, std::string_view rel);

}  // namespace hubwatch::hub
