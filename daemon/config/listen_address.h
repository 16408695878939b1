#pragma once

// The `listen` key: "127.0.0.1:8437", "[::1]:8437", "localhost:0" (port 0: any free port). An IP
// address literal (or localhost) and a port; host names are not resolved. Pure function.

#include <boost/asio/ip/tcp.hpp>
#include <string>

#include "estimator/base/result.h"

namespace hubwatch::config {

// Errors are bad input, start with "listen" and quote at most 80 characters of the value.
Result<boost::asio::ip::tcp::endpoint> ParseListenAddress(const std::string& listen);

}  // namespace hubwatch::config
