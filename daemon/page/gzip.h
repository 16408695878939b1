#pragma once

// gzip (RFC 1952) of a reply body, with zlib. Pure function; thread-safe.

#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::page {

Result<std::string> Gzip(std::string_view data, int level = 6);

// Whether an Accept-Encoding header value accepts gzip (a q=0 refuses it).
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace hubwatch::page
