#include "daemon/config/listen_address.h"

#include <boost/asio/ip/address.hpp>
#include <charconv>

#include "daemon/config/config.h"

namespace hubwatch::config {

Result<boost::asio::ip::tcp::endpoint> ParseListenAddress(const std::string& listen) {
  const std::string shown = config::QuoteForError(listen);
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return Error::InvalidInput("listen must be HOST:PORT, got " + shown);
  }
  std::string host = listen.substr(0, colon);
  const std::string_view port(listen.data() + colon + 1, listen.size() - colon - 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") host = "127.0.0.1";
  if (host.find('\0') != std::string::npos) {  // make_address would read up to the NUL only
    return Error::InvalidInput("listen " + shown + ": the host is not an IP address");
  }
  unsigned p = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p > 65535) {
    return Error::InvalidInput("listen " + shown + ": the port must be 0 to 65535");
  }
  boost::system::error_code bad;
  const boost::asio::ip::address address = boost::asio::ip::make_address(host, bad);
  if (bad) return Error::InvalidInput("listen " + shown + ": the host is not an IP address");
  return boost::asio::ip::tcp::endpoint(address, static_cast<uint16_t>(p));
}

}  // namespace hubwatch::config
