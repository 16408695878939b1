#pragma once

// URLs as RFC 3986 sees them: split into parts, references resolved against a base (§5.2, with
// remove_dot_segments), origins compared, components percent-encoded. Pure functions.

#include <optional>
#include <string>
#include <string_view>

namespace hubwatch::hub {

struct UrlParts {
  std::string scheme;  // lower-cased
  std::string authority;
  std::string path;
  std::string query;
  std::string fragment;
  bool has_scheme = false;
  bool has_authority = false;
  bool has_query = false;
  bool has_fragment = false;
};

// Splits per RFC 3986 appendix B. Never fails on odd input; it only splits.
UrlParts SplitUrl(std::string_view url);
std::string JoinUrl(const UrlParts& parts);

// Resolves `reference` (absolute, network-path, absolute-path or relative) against the absolute
// URL `base`. nullopt when `base` has no scheme.
std::optional<std::string> ResolveReference(std::string_view base, std::string_view reference);

// "scheme://authority", lower-cased; "" when the URL is not absolute. Two URLs are the same host
// for credentials iff their origins are equal.
std::string OriginOf(std::string_view url);

// The host of an absolute URL, lower-cased, without userinfo, port or IPv6 brackets
// ("https://u@[::1]:8080/x" -> "::1"); "" when there is none.
std::string HostOf(std::string_view url);

// Whether a request to `host` (as HostOf gives it) stays on this machine: "localhost" and
// "*.localhost" (curl resolves them to loopback itself), 127.0.0.0/8 and ::1. Anything else,
// a name that merely resolves to loopback included, is not.
bool IsLoopbackHost(std::string_view host);

// Percent-encodes everything but the unreserved characters (A-Z a-z 0-9 - . _ ~), like Python's
// quote(s, safe="") or JS encodeURIComponent: "refs/pr/1" -> "refs%2Fpr%2F1".
std::string EncodeComponent(std::string_view text);
// The same but keeps '/': for file paths in resolve URLs.
std::string EncodePath(std::string_view text);

}  // namespace hubwatch::hub
