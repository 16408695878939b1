#include "daemon/subscriptions/target_policy.h"

#include <arpa/inet.h>

#include <algorithm>

#include "tracker/hub/url.h"

namespace hubwatch::subscriptions {
namespace {

constexpr size_t kMaxUrlBytes = 2048;

bool InV4(uint32_t a, uint32_t net, int bits) { return (a >> (32 - bits)) == (net >> (32 - bits)); }

constexpr uint32_t V4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return a << 24 | b << 16 | c << 8 | d;
}

uint32_t EmbeddedV4(const in6_addr& a, int offset) {
  const uint8_t* b = a.s6_addr;
  return V4(b[offset], b[offset + 1], b[offset + 2], b[offset + 3]);
}

bool AllZero(const uint8_t* b, int n) {
  return std::all_of(b, b + n, [](uint8_t x) { return x == 0; });
}

struct Host {
  std::string name;  // lower-cased, brackets removed
  bool bracketed = false;
};

Result<Host> ParseHost(std::string_view authority) {
  if (authority.find('@') != std::string_view::npos) {
    return Error::InvalidInput("webhook URL must not contain credentials");
  }
  Host host;
  std::string_view rest;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Error::InvalidInput("webhook URL: unclosed [");
    host.name = std::string(authority.substr(1, close - 1));
    host.bracketed = true;
    rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return Error::InvalidInput("webhook URL: junk after the IPv6 address");
    }
  } else {
    const size_t colon = authority.rfind(':');
    host.name = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) rest = authority.substr(colon);
  }
  if (!rest.empty()) {  // ":port"
    const std::string_view port = rest.substr(1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(std::string(port)) > 65535 || std::stoi(std::string(port)) == 0) {
      return Error::InvalidInput("webhook URL: the port must be 1 to 65535");
    }
  }
  if (host.name.empty()) return Error::InvalidInput("webhook URL has no host");
  std::transform(host.name.begin(), host.name.end(), host.name.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
  if (host.bracketed) {
    in6_addr a6;
    if (inet_pton(AF_INET6, host.name.c_str(), &a6) != 1) {
      return Error::InvalidInput("webhook URL: [" + host.name + "] is not an IPv6 address");
    }
    return host;
  }
  for (char c : host.name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    if (!ok) return Error::InvalidInput("webhook URL: the host has characters a name cannot");
  }
  while (!host.name.empty() && host.name.back() == '.') host.name.pop_back();
  if (host.name.empty()) return Error::InvalidInput("webhook URL has no host");
  return host;
}

}  // namespace

std::optional<std::string_view> NonPublicReasonV4(uint32_t a) {
  if (InV4(a, V4(0, 0, 0, 0), 8)) return "unspecified";
  if (InV4(a, V4(127, 0, 0, 0), 8)) return "loopback";
  if (InV4(a, V4(10, 0, 0, 0), 8) || InV4(a, V4(172, 16, 0, 0), 12) ||
      InV4(a, V4(192, 168, 0, 0), 16) || InV4(a, V4(100, 64, 0, 0), 10)) {
    return "private";
  }
  if (InV4(a, V4(169, 254, 0, 0), 16)) return "link-local";
  if (InV4(a, V4(224, 0, 0, 0), 4)) return "multicast";
  if (InV4(a, V4(192, 0, 0, 0), 24) || InV4(a, V4(192, 0, 2, 0), 24) ||
      InV4(a, V4(198, 18, 0, 0), 15) || InV4(a, V4(198, 51, 100, 0), 24) ||
      InV4(a, V4(203, 0, 113, 0), 24) || InV4(a, V4(240, 0, 0, 0), 4)) {
    return "reserved";
  }
  return std::nullopt;
}

std::optional<std::string_view> NonPublicReasonV6(const in6_addr& a) {
  const uint8_t* b = a.s6_addr;
  if (AllZero(b, 16)) return "unspecified";
  if (AllZero(b, 15) && b[15] == 1) return "loopback";
  if (AllZero(b, 10) && b[10] == 0xff && b[11] == 0xff) return NonPublicReasonV4(EmbeddedV4(a, 12));
  if (AllZero(b, 12)) {  // IPv4-compatible (deprecated): never a real target
    std::optional<std::string_view> inner = NonPublicReasonV4(EmbeddedV4(a, 12));
    return inner ? inner : std::optional<std::string_view>("reserved");
  }
  // NAT64 well-known prefix 64:ff9b::/96 and the local-use 64:ff9b:1::/48.
  if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
    if (AllZero(b + 4, 8)) return NonPublicReasonV4(EmbeddedV4(a, 12));
    if (b[4] == 0 && b[5] == 1) return "private";
  }
  if (b[0] == 0x20 && b[1] == 0x02) return NonPublicReasonV4(EmbeddedV4(a, 2));  // 6to4
  if ((b[0] & 0xfe) == 0xfc) return "unique-local";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "private";  // site-local (deprecated)
  if (b[0] == 0xff) return "multicast";
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return "reserved";  // docs
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) return "reserved";        // Teredo
  if ((b[0] & 0xe0) != 0x20) return "reserved";  // outside 2000::/3, global unicast
  return std::nullopt;
}

std::optional<std::string_view> NonPublicReason(const sockaddr* address, socklen_t length) {
  if (address && address->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    return NonPublicReasonV4(ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr));
  }
  if (address && address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    return NonPublicReasonV6(reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
  }
  return "reserved";
}

std::optional<std::string_view> NonPublicReasonOfLiteral(std::string_view ip) {
  const std::string text(ip);
  in6_addr a6;
  if (inet_pton(AF_INET6, text.c_str(), &a6) == 1) return NonPublicReasonV6(a6);
  // inet_aton takes every IPv4 form getaddrinfo does: "127.1", "0x7f.1", "2130706433".
  in_addr a4;
  if (inet_aton(text.c_str(), &a4) != 0) return NonPublicReasonV4(ntohl(a4.s_addr));
  return std::nullopt;
}

Status CheckTargetUrl(std::string_view url, bool allow_private) {
  if (url.size() > kMaxUrlBytes) return Error::InvalidInput("webhook URL is too long");
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return Error::InvalidInput("webhook URL must be ASCII without spaces");
    }
  }
  const hub::UrlParts parts = hub::SplitUrl(url);
  if (!parts.has_scheme || (parts.scheme != "http" && parts.scheme != "https")) {
    return Error::InvalidInput("webhook URL must be http or https");
  }
  if (!parts.has_authority) return Error::InvalidInput("webhook URL has no host");
  Result<Host> host = ParseHost(parts.authority);
  if (!host.ok()) return host.error();
  if (allow_private) return Status::Ok();
  const std::string& name = host->name;
  if (name == "localhost" || (name.size() > 10 && name.ends_with(".localhost"))) {
    return Error::InvalidInput("webhook URL points at a loopback host (" + RedactUrl(url) +
                               "); set webhooks.allow_private_targets to allow it");
  }
  if (std::optional<std::string_view> why = NonPublicReasonOfLiteral(name)) {
    return Error::InvalidInput("webhook URL points at a " + std::string(*why) + " address (" +
                               RedactUrl(url) +
                               "); set webhooks.allow_private_targets to allow it");
  }
  return Status::Ok();
}

std::string RedactUrl(std::string_view url) {
  const hub::UrlParts parts = hub::SplitUrl(url);
  std::string_view authority = parts.authority;
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority = authority.substr(at + 1);
  return parts.scheme + "://" + std::string(authority);
}

}  // namespace hubwatch::subscriptions
