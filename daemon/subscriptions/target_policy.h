#pragma once

// Where webhooks may be sent: the SSRF guard. A subscription URL must be http or https with a
// host and no credentials, and the address a delivery actually connects to must be public:
// not loopback, private (RFC 1918, CGNAT), link-local (cloud metadata included), unique-local,
// unspecified, multicast, documentation or otherwise reserved, for IPv4 and IPv6 alike, and
// IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by the
// embedded address. allow_private lifts the address rule (tests, trusted networks).
//
// A hostname is checked twice: its literal form when the subscription is created, and every
// resolved address at connect time (CurlWebhookSender), so DNS that later points at an inner
// address (rebinding) is refused too. Pure functions; safe from any thread.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::subscriptions {

// Checks a subscription URL when it is created or synced. With allow_private false, a host
// that is an IP literal (in any form getaddrinfo would accept, "127.1" and "2130706433"
// included) must be public, and "localhost" is refused by name.
Status CheckTargetUrl(std::string_view url, bool allow_private);

// Why the address is not a public unicast one ("loopback", "private", "link-local",
// "unique-local", "unspecified", "multicast", "reserved"); nullopt when it is public.
std::optional<std::string_view> NonPublicReason(const sockaddr* address, socklen_t length);
std::optional<std::string_view> NonPublicReasonV4(uint32_t host_order);
std::optional<std::string_view> NonPublicReasonV6(const in6_addr& address);
// For an IP literal ("10.0.0.1", "::1"); nullopt for a public one and for a non-literal.
std::optional<std::string_view> NonPublicReasonOfLiteral(std::string_view ip);

// The URL cut to scheme://host[:port], for logs and error messages: paths, queries and
// userinfo can hold tokens (many webhook URLs embed one).
std::string RedactUrl(std::string_view url);

}  // namespace hubwatch::subscriptions
